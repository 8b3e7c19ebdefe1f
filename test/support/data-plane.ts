/**
 * Helpers of the data-plane tests: a workspace with a service on the shared host's embedded
 * PostGIS, layers published from its demo tables, settings switched, and calls to the workspace's
 * OGC API (`/workspaces/{ws}/ogc`, beside `/api/v1`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { type ApiResponse, asSuperAdmin, call } from './client.ts';
import { createWorkspace } from './fixtures.ts';

/** The host's origin (`https://127.0.0.1:<port>`). */
export function hostOrigin(): string {
  return new URL(inject('host').url).origin;
}

/** The embedded PostGIS of the shared test host (written by its bootstrap). */
export function hostPostgis(): {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string;
} {
  return JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
}

/** GET on the data plane: `path` under `/workspaces/{ws}/ogc`. */
export function ogc(
  workspace: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  return call('GET', `/workspaces/${workspace}/ogc${path}`, { baseUrl: hostOrigin(), headers });
}

/** Replaces a settings document (ogcapi or ogc-tiles) with `patch` over the current one. */
export async function setSettings(
  workspace: string,
  kind: 'ogcapi' | 'ogc-tiles',
  patch: Record<string, unknown>,
) {
  const current = await call('GET', `/workspaces/${workspace}/settings/${kind}`, { headers: asSuperAdmin() });
  expect(current.status, current.text).toBe(200);
  const { version: _v, ...doc } = current.body as Record<string, unknown>;
  const res = await call('PUT', `/workspaces/${workspace}/settings/${kind}`, {
    headers: { ...asSuperAdmin(), 'If-Match': current.headers.etag as string },
    body: { ...doc, ...patch },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** A fresh workspace with a PostGIS service on the demo database. */
export async function servedWorkspace() {
  const ws = await createWorkspace();
  const res = await call('POST', `/workspaces/${ws.id}/services`, {
    headers: asSuperAdmin(),
    body: { name: 'pg', type: 'postgis', connection: hostPostgis() },
  });
  expect(res.status, res.text).toBe(201);
  return { ws, service: res.body as { id: string; name: string } };
}

/** Publishes a layer (201) and returns it; its public id defaults to the table's name. */
export async function publishLayer(workspace: string, service: string, body: Record<string, unknown>) {
  const table = typeof body.source_layer === 'string' ? body.source_layer.split('.').pop() : undefined;
  const res = await call('POST', `/workspaces/${workspace}/services/${service}/layers`, {
    headers: asSuperAdmin(),
    body: { ...(table ? { public_id: table } : {}), ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; public_id: string; version: number };
}

/** Changes a layer (PUT with its ETag). */
export async function changeLayer(
  workspace: string,
  service: string,
  layer: { id: string },
  patch: Record<string, unknown>,
) {
  const current = await call('GET', `/workspaces/${workspace}/services/${service}/layers/${layer.id}`, {
    headers: asSuperAdmin(),
  });
  const {
    id: _id,
    version: _v,
    created_at: _c,
    updated_at: _u,
    ...body
  } = current.body as Record<string, unknown>;
  for (const k of ['workspace_id', 'service_id', 'is_sql_view', 'geometry_type', 'native_extent'])
    delete body[k];
  const res = await call('PUT', `/workspaces/${workspace}/services/${service}/layers/${layer.id}`, {
    headers: { ...asSuperAdmin(), 'If-Match': current.headers.etag as string },
    body: { ...body, ...patch },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Asserts an OGC exception body with the status (and code). */
export function expectException(res: ApiResponse, status: number, code?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  expect(typeof res.body?.code, res.text).toBe('string');
  expect(typeof res.body?.description, res.text).toBe('string');
  if (code) expect(res.body.code).toBe(code);
}
