/** The bodies the CLI reads: the generated client's schemas (client/api-types.ts, ADR 0096). */

import type { Schemas } from '../client/index.ts';

export type ImportJob = Schemas['ImportJob'];
export type ImportStatus = ImportJob['status'];
/**
 * Every import status, in the order of an import's life. The record is checked both ways against
 * the generated type, so a status the API adds or drops is a compile error here (issue #28).
 */
const importStatuses: Record<ImportStatus, true> = {
  awaiting_upload: true,
  queued: true,
  running: true,
  awaiting_plan: true,
  ready_to_publish: true,
  publishing: true,
  published: true,
  cancelling: true,
  cancelled: true,
  failed: true,
  rolling_back: true,
  rolled_back: true,
};
export const IMPORT_STATUSES = Object.keys(importStatuses) as ImportStatus[];
/** The presigned form an import is uploaded with (any file field name: the form is S3's, not the API's). */
export type UploadTicket = Omit<NonNullable<ImportJob['upload']>, 'file_field'> & { file_field: string };
export type ImportEvent = Schemas['ImportEvent'];
export type DeletionOperation = Schemas['DeletionOperation'];
export type Layer = Schemas['Layer'];
export type ImportList = Schemas['ImportList'];
export type Service = Schemas['Service'];
