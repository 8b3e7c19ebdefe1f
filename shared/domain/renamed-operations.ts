import { own } from './dictionary.ts';

/**
 * The operation ids this API used before it took the peer server's (ADR 0132), each with the id
 * that replaced it. A role policy stored before the rename may still name an old id: it means the
 * renamed operation, exactly as before.
 */
export const renamedOperationIds: Readonly<Record<string, string>> = Object.freeze({
  testServiceConnection: 'testExistingServiceConnection',
  getDeletion: 'getDeletionOperation',
  listDeletions: 'listDeletionOperations',
  retryDeletion: 'retryDeletionOperation',
  getImportPreview: 'previewImport',
  putImportPlan: 'setImportPlan',
  listAudit: 'listAuditEvents',
});

/** The current id of a management operation id: a renamed one's replacement, any other id as given. */
export function currentOperationId(id: string): string {
  return own(renamedOperationIds, id) ?? id;
}
