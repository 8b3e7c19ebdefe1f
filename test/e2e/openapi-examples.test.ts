import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { successWithSchema } from '../../shared/api/openapi.ts';
import type { Operation } from '../../shared/api/operation.ts';
import { routes } from '../../shared/api/routes.ts';
import { type ApiResponse, asSuperAdmin, call } from '../support/client.ts';

/**
 * The route table's examples replayed against the local host (issue #14, ADR 0095), so an example
 * can't lie: each request below is the operation's example verbatim (path parameters, query, body),
 * in the order that builds the examples' story (workspace `roads-demo`, its key, role, mapping,
 * asset, style, tile matrix set, settings, import). The answer must have a documented 2xx status,
 * match the handler's schema, have every field the example shows (with the same JSON type), and
 * echo the fields the example request set.
 */

const byId = new Map(routes.map((op) => [op.operationId, op]));

/** The PNG the `marker` asset example describes (70 bytes; its sha256 is the example's). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Sends an operation's example request; `body` replaces it for operations that take raw bytes. */
function send(op: Operation, options: { body?: Buffer; contentType?: string } = {}): Promise<ApiResponse> {
  const params = (op.examples?.params ?? {}) as Record<string, string>;
  const path = op.path
    .replace('/api/v1', '')
    .replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(params[name] as string));
  const query = new URLSearchParams(op.examples?.query ?? {}).toString();
  return call(op.method, `${path}${query ? `?${query}` : ''}`, {
    headers: {
      ...asSuperAdmin(),
      ...(options.contentType ? { 'Content-Type': options.contentType } : {}),
    },
    body: options.body ?? op.examples?.request,
  });
}

/** Replays one operation's example and checks the answer against the example response. */
async function replay(operationId: string, options: { body?: Buffer; contentType?: string } = {}) {
  const op = byId.get(operationId) as Operation;
  const res = await send(op, options);
  const documented = Object.keys(op.responses)
    .map(Number)
    .filter((s) => s < 300);
  expect(documented, `${operationId}: ${res.status} ${res.text}`).toContain(res.status);
  const schema = op.responses[res.status]?.schema ?? op.responses[successWithSchema(op) as number]?.schema;
  if (!schema) return res;
  const parsed = z.safeParse(schema as z.ZodMiniType, res.body);
  expect(parsed.success, `${operationId} answer: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
  const example = op.examples?.response as Record<string, unknown> | undefined;
  expect(example, `${operationId} has a response example`).toBeDefined();
  const actual = res.body as Record<string, unknown>;
  for (const [key, value] of Object.entries(example ?? {})) {
    // A nullable field may be null for this caller and not for the example's (the schema checked it).
    if (value === undefined || value === null || actual[key] === null) continue;
    expect(jsonType(actual[key]), `${operationId}: field ${key} of the example`).toBe(jsonType(value));
  }
  const request = op.examples?.request;
  if (request && typeof request === 'object' && !Array.isArray(request)) {
    for (const [key, value] of Object.entries(request)) {
      if (example && key in example && typeof value !== 'object')
        expect(actual[key], `${operationId}: echoes ${key} like the example`).toEqual(example[key]);
    }
  }
  return res;
}

describe('the route table examples, replayed against the local host', () => {
  it('workspace, API key, role and policy, claim mapping', async () => {
    await replay('createWorkspace');
    await replay('getWorkspace');
    await replay('updateWorkspace');
    await replay('createAPIKey');
    await replay('createRole');
    await replay('addRolePolicy');
    await replay('getRole');
    await replay('createClaimMapping');
    await replay('listClaimMappings');
  });

  it('style asset, style, tile matrix set, settings, import', async () => {
    // The example workspace (created by the first test, or here when this one runs alone).
    const ws = await call('GET', '/workspaces/roads-demo', { headers: asSuperAdmin() });
    if (ws.status === 404) await replay('createWorkspace');
    const created = await replay('putStyleAsset', { body: PNG, contentType: 'image/png' });
    expect(created.status).toBe(201);
    const replaced = await replay('putStyleAsset', { body: PNG, contentType: 'image/png' });
    expect(replaced.status).toBe(200);
    const asset = replaced.body as Record<string, unknown>;
    const assetExample = byId.get('putStyleAsset')?.examples?.response as Record<string, unknown>;
    expect([asset.size_bytes, asset.sha256]).toEqual([assetExample.size_bytes, assetExample.sha256]);
    await replay('createStyle');
    const style = await replay('getStyle');
    expect((style.body as { asset_refs: string[] }).asset_refs).toEqual(['marker']);
    await replay('updateStyle');
    await replay('putTileMatrixSet');
    await replay('getTileMatrixSet');
    await replay('updateWMSSettings');
    await replay('updateOGCAPISettings');
    await replay('updateOGCTilesAPISettings');
    await replay('createImport');
  });

  it('the reads of the story (lists, settings, the caller, the console configuration)', async () => {
    const ws = await call('GET', '/workspaces/roads-demo', { headers: asSuperAdmin() });
    if (ws.status === 404) await replay('createWorkspace');
    for (const id of [
      'listAPIKeys',
      'listRoles',
      'listStyles',
      'listStyleAssets',
      'listTileMatrixSets',
      'getWMSSettings',
      'getOGCAPISettings',
      'getOGCTilesAPISettings',
      'listImports',
      'listWorkspaceAudit',
      'listGlobalClaimMappings',
      'getAuthMe',
      'getConsoleConfig',
    ])
      await replay(id);
  });
});
