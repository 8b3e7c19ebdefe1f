import type { DataAction, Operation } from './operation.ts';
import * as apiKeys from './operations/api-keys.ts';
import * as audit from './operations/audit.ts';
import * as auth from './operations/auth.ts';
import * as claimMappings from './operations/claim-mappings.ts';
import * as deletions from './operations/deletions.ts';
import * as imports from './operations/imports.ts';
import * as integrity from './operations/integrity.ts';
import * as layerGroups from './operations/layer-groups.ts';
import * as layers from './operations/layers.ts';
import * as meta from './operations/meta.ts';
import * as mosaics from './operations/mosaics.ts';
import * as roles from './operations/roles.ts';
import * as services from './operations/services.ts';
import * as settings from './operations/settings.ts';
import * as styleAssets from './operations/style-assets.ts';
import * as styles from './operations/styles.ts';
import * as tileCache from './operations/tile-cache.ts';
import * as tileMatrixSets from './operations/tile-matrix-sets.ts';
import * as workspaces from './operations/workspaces.ts';

/**
 * THE route table: CDK creates one function and one method per entry, the local host routes by
 * it, and the OpenAPI document is generated from it.
 */
export const routes: readonly Operation[] = [
  ...Object.values(meta),
  ...Object.values(auth),
  ...Object.values(workspaces),
  ...Object.values(apiKeys),
  ...Object.values(roles),
  ...Object.values(claimMappings),
  ...Object.values(services),
  ...Object.values(deletions),
  ...Object.values(layers),
  ...Object.values(layerGroups),
  ...Object.values(mosaics),
  ...Object.values(settings),
  ...Object.values(tileMatrixSets),
  ...Object.values(styles),
  ...Object.values(styleAssets),
  ...Object.values(imports),
  ...Object.values(audit),
  ...Object.values(integrity),
  ...Object.values(tileCache),
] as Operation[];

/**
 * What makeHandler itself reads on every `{workspace}` route before the operation runs: the
 * workspace (by id, or its name marker) and — for token callers — the workspace's claim mappings
 * and a custom role's policies (Queries).
 */
export const workspaceRouteDataAccess: readonly DataAction[] = ['GetItem', 'Query'];

/**
 * What makeHandler reads and writes on every POST for its `Idempotency-Key` (ADR 0088): the record
 * is claimed (Put), read back (Get), completed or freed (Update; freeing is no Delete, so a POST
 * gains no DeleteItem on the table).
 */
export const idempotencyDataAccess: readonly DataAction[] = ['GetItem', 'PutItem', 'UpdateItem'];

/**
 * What every mutating operation writes beside its change (ADR 0094): the audit record, in the
 * change's transaction or for a refused request — on the audit partitions only.
 */
export const auditDataAccess: readonly DataAction[] = ['PutAuditRecord'];

/** Every DynamoDB action an operation's function needs: its own `data` plus the handler stack's. */
export function dataAccessOf(op: Operation): readonly DataAction[] {
  const stack = op.path.includes('{workspace}') ? workspaceRouteDataAccess : [];
  const idempotency = op.method === 'POST' ? idempotencyDataAccess : [];
  const audit = op.method === 'GET' ? [] : auditDataAccess;
  return [...new Set([...op.data, ...stack, ...idempotency, ...audit])];
}

/**
 * The KMS actions an operation's function needs on the secrets key: its own `secrets` plus, on
 * POSTs, sealing and opening the stored answers of idempotent requests (ADR 0088).
 */
export function secretsAccessOf(op: Operation): readonly ('encrypt' | 'decrypt')[] {
  const idempotency = op.method === 'POST' ? (['encrypt', 'decrypt'] as const) : [];
  return [...new Set([...(op.secrets ?? []), ...idempotency])];
}

/**
 * DynamoDB actions of the REQUEST authorizer: key and session lookups, global claim mappings, and
 * the credential with the path's workspace and service in one BatchGetItem (ADR 0099).
 */
export const authorizerDataAccess: readonly DataAction[] = ['GetItem', 'BatchGetItem', 'Query'];

/** The API's stated interface version (spec §9). */
export const apiVersion = '0.1.2';
