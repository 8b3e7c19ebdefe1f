import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { serviceCandidates } from '#domain/services.ts';
import { workspaceCandidates } from '#domain/workspaces.ts';
import { type Key, keys } from '#store/keys.ts';

/**
 * The floor of a list's architecture (issue #27, ADR 0140): what the REQUEST authorizer reads for
 * an API key on the list's path, THEN the list's own Query, nothing else. The floor server
 * (`/floor-auth-list`) sends exactly these two requests one after the other, and the phase
 * profile (bench/list-phases-child.ts) checks them against what the host really sends.
 */
export type ListKind = 'workspaces' | 'services' | 'layers';

export interface ListFloor {
  list: ListKind;
  /** SHA-256 (hex) of the API key's secret: the credential item's key. */
  keyHash: string;
  /** The `{workspace}` of the path as sent (services and layers). */
  workspace?: string;
  /** The `{service}` of the path as sent (layers). */
  service?: string;
  limit: number;
}

/** The query string of `/floor-auth-list` for a list's floor. */
export function listFloorParams(f: ListFloor): string {
  const q = new URLSearchParams({ list: f.list, key: f.keyHash, limit: String(f.limit) });
  if (f.workspace !== undefined) q.set('ws', f.workspace);
  if (f.service !== undefined) q.set('svc', f.service);
  return q.toString();
}

export function listFloorOf(q: URLSearchParams): ListFloor {
  const list = q.get('list');
  if (list !== 'workspaces' && list !== 'services' && list !== 'layers') throw new Error(`no list '${list}'`);
  return {
    list,
    keyHash: q.get('key') ?? '',
    limit: Number(q.get('limit') ?? 100),
    ...(q.get('ws') !== null ? { workspace: q.get('ws') as string } : {}),
    ...(q.get('svc') !== null ? { service: q.get('svc') as string } : {}),
  };
}

/**
 * The authorizer's read for an API key (shared/auth/authenticate.ts, shared/store/target-lookup.ts):
 * with no `{workspace}` in the path (listWorkspaces) it is one consistent GetItem of the
 * credential (`findCredentialByHash`); with one, a single consistent BatchGetItem of the
 * credential, the workspace by id and by name marker, and the service by id and by name marker
 * (a UUID is a valid name too, so both candidates are read).
 */
export function authorizerRead(f: ListFloor): { op: 'GetItem' | 'BatchGetItem'; keys: Key[] } {
  const credential = keys.apiKeyHash(f.keyHash);
  if (f.workspace === undefined) return { op: 'GetItem', keys: [credential] };
  const ws = workspaceCandidates(f.workspace);
  const svc = f.service === undefined ? undefined : serviceCandidates(f.service);
  const wanted: (Key | undefined)[] = [
    credential,
    ws.id ? keys.workspace(ws.id) : undefined,
    ws.name ? keys.workspaceName(ws.name) : undefined,
    ws.id && svc?.id ? keys.service(ws.id, svc.id) : undefined,
    ws.id && svc ? keys.serviceName(ws.id, svc.name) : undefined,
  ];
  return { op: 'BatchGetItem', keys: wanted.filter((k): k is Key => k !== undefined) };
}

/**
 * The first page's Query of the list's repository (shared/store/*-repository.ts through
 * `listingPage`): same key condition, filter, Limit, no projection, eventually consistent.
 * `workspace` and `service` must be ids here (the bench addresses them by id).
 */
export function listQuery(f: ListFloor, table: string): QueryCommandInput {
  if (f.list === 'workspaces') {
    return {
      TableName: table,
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk',
      FilterExpression: '#s = :active',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':active': 'active', ':pk': keys.workspaceListingPartition },
      Limit: f.limit,
    };
  }
  const partition = keys.workspacePartition(f.workspace ?? '');
  if (f.list === 'services') {
    return {
      TableName: table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      FilterExpression: '#st = :active',
      ExpressionAttributeNames: { '#st': 'status' },
      ExpressionAttributeValues: { ':active': 'active', ':pk': partition, ':prefix': keys.servicePrefix },
      Limit: f.limit,
    };
  }
  return {
    TableName: table,
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: { ':pk': partition, ':prefix': keys.layerPrefix(f.service ?? '') },
    Limit: f.limit,
  };
}

/**
 * The floor of a list: the authorizer's read (`authorizerRead`), THEN the list's Query, through
 * `db`; the Query only when the credential item exists and is not revoked (as the authorizer).
 */
export async function readListFloor(
  db: Pick<DynamoDBDocumentClient, 'send'>,
  table: string,
  f: ListFloor,
): Promise<{ authorized: boolean; items: Record<string, unknown>[] }> {
  const read = authorizerRead(f);
  const [credentialKey] = read.keys;
  let credential: Record<string, unknown> | undefined;
  if (read.op === 'GetItem') {
    credential = (
      await db.send(new GetCommand({ TableName: table, Key: credentialKey, ConsistentRead: true }))
    ).Item;
  } else {
    const out = await db.send(
      new BatchGetCommand({ RequestItems: { [table]: { Keys: read.keys, ConsistentRead: true } } }),
    );
    credential = (out.Responses?.[table] ?? []).find(
      (i) => i.PK === credentialKey?.PK && i.SK === credentialKey?.SK,
    );
  }
  if (!credential || credential.revoked) return { authorized: false, items: [] };
  const out = await db.send(new QueryCommand(listQuery(f, table)));
  return { authorized: true, items: out.Items ?? [] };
}
