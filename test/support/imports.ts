import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import pg from 'pg';
import { expect, inject } from 'vitest';
import { type ApiResponse, agentFor, asSuperAdmin, call } from './client.ts';

/** The upload ticket of an import. */
export interface Ticket {
  url: string;
  method: 'POST';
  fields: Record<string, string>;
  file_field: 'file';
  expires_at: string;
  max_bytes: number;
}

/** A multipart/form-data body: the fields, then the file (as a browser or S3 client sends it). */
export function formBody(fields: Record<string, string>, file: Buffer, filename: string) {
  const boundary = `----geoplane${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
  );
  parts.push(file, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POSTs the file to the ticket's URL (the local host's S3 stand-in); the status and body text. */
export function upload(
  ticket: Pick<Ticket, 'url' | 'fields'>,
  file: Buffer,
  filename = 'data.bin',
  dataDir = inject('host').dataDir,
): Promise<{ status: number; text: string }> {
  const { body, contentType } = formBody(ticket.fields, file, filename);
  return new Promise((resolve, reject) => {
    const req = request(
      ticket.url,
      {
        method: 'POST',
        agent: agentFor(dataDir),
        headers: { 'Content-Type': contentType, 'Content-Length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A generated GeoJSON FeatureCollection of `n` points with a few properties. */
export function pointsGeoJson(n: number, offset = 0): Buffer {
  const features = [];
  for (let i = 0; i < n; i++) {
    const k = i + offset;
    features.push({
      type: 'Feature',
      properties: { name: `P${k}`, rank: k, score: k / 10, ok: k % 2 === 0 },
      geometry: { type: 'Point', coordinates: [-10 + (k % 200) / 10, 40 + (k % 150) / 10] },
    });
  }
  return Buffer.from(JSON.stringify({ type: 'FeatureCollection', features }));
}

/** An import client for one workspace, as `headers` (default super_admin). */
export function importsOf(workspace: string, headers: Record<string, string> = asSuperAdmin()) {
  const base = `/workspaces/${workspace}/imports`;
  const api = (method: string, path: string, body?: unknown) =>
    call(method, `${base}${path}`, { headers, ...(body !== undefined ? { body } : {}) });
  return {
    api,
    create: (body: Record<string, unknown>) => api('POST', '', body),
    get: (id: string) => api('GET', `/${id}`),
    start: (id: string) => api('POST', `/${id}/start`),
    publish: (id: string) => api('POST', `/${id}/publish`),
    rollback: (id: string) => api('POST', `/${id}/rollback`),
    retry: (id: string) => api('POST', `/${id}/retry`),
    cancel: (id: string) => api('DELETE', `/${id}`),
    plan: (id: string, plan: unknown) => api('PUT', `/${id}/plan`, plan),
    history: (id: string, query = '') => api('GET', `/${id}/history${query}`),
    preview: (id: string, query = '') => api('GET', `/${id}/preview${query}`),
    /** Polls the import until its status is one of `statuses` (the last answer otherwise, after `ms`). */
    async until(id: string, statuses: string[], ms = 60_000): Promise<ApiResponse> {
      const end = Date.now() + ms;
      for (;;) {
        const res = await api('GET', `/${id}`);
        expect(res.status, res.text).toBe(200);
        if (statuses.includes(res.body.status) || Date.now() > end) return res;
        await new Promise((r) => setTimeout(r, 150));
      }
    },
    /** Creates an upload import, uploads `file` and starts it; the started job. */
    async uploaded(file: Buffer, filename: string, extra: Record<string, unknown> = {}) {
      const created = await api('POST', '', {
        source: { kind: 'upload', filename, size_bytes: file.length },
        ...extra,
      });
      expect(created.status, created.text).toBe(201);
      const sent = await upload(created.body.upload, file, filename);
      expect(sent.status, sent.text).toBe(204);
      const started = await api('POST', `/${created.body.id}/start`);
      expect(started.status, started.text).toBe(202);
      return started.body as { id: string; status: string };
    },
  };
}

/** The embedded PostGIS of the test host as its superuser (short connections: it serves one at a time). */
export async function adminQuery<T = Record<string, unknown>>(
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const dataDir = inject('host').dataDir;
  const boot = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8'));
  const marker = JSON.parse(readFileSync(join(dataDir, 'postgis.json'), 'utf8'));
  const client = new pg.Client({
    host: boot.postgis.host,
    port: boot.postgis.port,
    database: boot.postgis.database,
    user: 'postgres',
    password: marker.admin_password,
  });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Every schema (with its tables) of one import in the import database: `[]` means nothing left behind. */
export async function relationsOf(importId: string): Promise<string[]> {
  const hex = importId.replaceAll('-', '');
  const rows = await adminQuery<{ name: string }>(
    `SELECT n.nspname || coalesce('.' || c.relname, '') AS name
       FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm')
      WHERE n.nspname IN ($1, $2) ORDER BY 1`,
    [`import_${hex}`, `import_staging_${hex}`],
  );
  return rows.map((r) => r.name);
}
