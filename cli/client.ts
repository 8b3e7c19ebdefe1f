import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CliError, type Connection } from './config.ts';
import type { DeletionOperation, ImportEvent, ImportJob, Layer } from './types.ts';

/** An error answer of the API (`{code, message, reason, request_id}`). */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
    readonly requestId?: string,
  ) {
    super(reason && reason !== message ? `${message} (${reason})` : message);
  }
}

/** Reads a whole (small, JSON) response. */
export function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** The message of a network failure, with a hint for certificate problems. */
export function networkMessage(error: unknown, url: string): string {
  const e = error as NodeJS.ErrnoException;
  const code = e.code ?? '';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code))
    return `cannot verify the TLS certificate of ${new URL(url).host} (${code}); set GEOPLANE_CA_FILE to the CA that signed it`;
  if (code === 'ECONNREFUSED')
    return `cannot connect to ${new URL(url).host}: connection refused (is the API running?)`;
  return `request to ${new URL(url).host} failed: ${e.message || code}`;
}

function errorFrom(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { message?: unknown; reason?: unknown; request_id?: unknown };
    if (typeof body.message === 'string')
      return new ApiError(
        status,
        body.message,
        typeof body.reason === 'string' ? body.reason : undefined,
        typeof body.request_id === 'string' ? body.request_id : undefined,
      );
  } catch {
    // not JSON: fall through
  }
  return new ApiError(status, `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}

const enc = encodeURIComponent;

/** The API calls the CLI makes. */
export class GeoPlaneClient {
  constructor(readonly connection: Connection) {}

  /** One JSON request; `path` is relative to the base URL (`/workspaces/...`). */
  async request<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const url = new URL(this.connection.baseUrl + path);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(
        url,
        {
          method,
          ...(url.protocol === 'https:' && this.connection.agent ? { agent: this.connection.agent } : {}),
          headers: {
            Accept: 'application/json',
            'X-API-Key': this.connection.apiKey,
            ...(payload
              ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) }
              : {}),
          },
        },
        resolve,
      );
      req.on('error', (error) => reject(new CliError(networkMessage(error, url.href))));
      req.end(payload);
    });
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    if (status >= 400 || status < 200) throw errorFrom(status, text);
    if (!text) return { status, body: undefined as T };
    try {
      return { status, body: JSON.parse(text) as T };
    } catch {
      throw new CliError(`the API answered ${status} with a body that is not JSON`);
    }
  }

  private imports(workspace: string, id?: string, action?: string): string {
    if (!workspace.trim()) throw new CliError('a workspace is required (--workspace)');
    if (id !== undefined && !id.trim()) throw new CliError('an import id is required');
    return `/workspaces/${enc(workspace)}/imports${id !== undefined ? `/${enc(id)}` : ''}${action ? `/${action}` : ''}`;
  }

  async createImport(
    workspace: string,
    input: {
      name?: string;
      source: { kind: 'upload'; filename: string; size_bytes: number };
      service_name?: string;
      auto_publish?: boolean;
    },
  ): Promise<ImportJob> {
    return (await this.request<ImportJob>('POST', this.imports(workspace), input)).body;
  }

  async startImport(workspace: string, id: string): Promise<ImportJob> {
    return (await this.request<ImportJob>('POST', this.imports(workspace, id, 'start'))).body;
  }

  async getImport(workspace: string, id: string): Promise<ImportJob> {
    return (await this.request<ImportJob>('GET', this.imports(workspace, id))).body;
  }

  async publishImport(workspace: string, id: string): Promise<ImportJob> {
    return (await this.request<ImportJob>('POST', this.imports(workspace, id, 'publish'))).body;
  }

  async rollbackImport(workspace: string, id: string): Promise<ImportJob> {
    return (await this.request<ImportJob>('POST', this.imports(workspace, id, 'rollback'))).body;
  }

  /** DELETE: 202 with the import (cancelling) or 204 (cancelled at once). */
  async cancelImport(workspace: string, id: string): Promise<ImportJob | undefined> {
    return (await this.request<ImportJob | undefined>('DELETE', this.imports(workspace, id))).body;
  }

  async listImports(workspace: string, status?: string): Promise<ImportJob[]> {
    const all: ImportJob[] = [];
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ limit: '100' });
      if (status) query.set('status', status);
      if (cursor) query.set('cursor', cursor);
      const page = (
        await this.request<{ imports: ImportJob[]; next_cursor?: string }>(
          'GET',
          `${this.imports(workspace)}?${query}`,
        )
      ).body;
      all.push(...page.imports);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  /** Every event of an import, oldest first (all pages). */
  async importHistory(workspace: string, id: string): Promise<ImportEvent[]> {
    const all: ImportEvent[] = [];
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ limit: '100' });
      if (cursor) query.set('cursor', cursor);
      const page = (
        await this.request<{ events: ImportEvent[]; next_cursor?: string }>(
          'GET',
          `${this.imports(workspace, id, 'history')}?${query}`,
        )
      ).body;
      all.push(...page.events);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  /** Every layer of a service (all pages). */
  async listLayers(workspace: string, service: string): Promise<Layer[]> {
    const all: Layer[] = [];
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ limit: '100' });
      if (cursor) query.set('cursor', cursor);
      const page = (
        await this.request<{ layers: Layer[]; next_cursor?: string }>(
          'GET',
          `/workspaces/${enc(workspace)}/services/${enc(service)}/layers?${query}`,
        )
      ).body;
      all.push(...page.layers);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  async getDeletion(id: string): Promise<DeletionOperation> {
    return (await this.request<DeletionOperation>('GET', `/deletions/${enc(id)}`)).body;
  }
}
