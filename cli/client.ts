import {
  createGeoPlaneClient,
  dataOf,
  GeoPlaneApiError,
  type GeoPlaneClient as TypedClient,
} from '#client/index.ts';
import { CliError, type Connection, UnreachableError, UsageError } from './config.ts';
import { plain } from './terminal.ts';
import type { DeletionOperation, ImportEvent, ImportJob, ImportList, Layer, Service } from './types.ts';

/**
 * An error answer of the API (`{code, message, detail, reason, request_id, issues}`, DESIGN §5):
 * `Not Found: Workspace 'demo2' does not exist. (404 workspace_not_found)`, then one line per
 * issue, and the request id of a 5xx to quote to an operator. Its text is the server's, so every
 * part is made one plain line here, before anything prints it (ADR 0109).
 */
export class ApiError extends CliError {
  readonly detail?: string;
  readonly reason?: string;
  readonly requestId?: string;

  constructor(
    readonly status: number,
    message: string,
    body: { detail?: unknown; reason?: unknown; request_id?: unknown; issues?: unknown } = {},
  ) {
    const text = plain(message);
    const detail = typeof body.detail === 'string' && body.detail ? plain(body.detail) : undefined;
    const reason = typeof body.reason === 'string' && body.reason ? plain(body.reason) : undefined;
    const requestId =
      typeof body.request_id === 'string' && body.request_id ? plain(body.request_id) : undefined;
    const head = !detail || detail === text ? text : text ? `${text}: ${detail}` : detail;
    const lines = [`${head} (${status}${reason ? ` ${reason}` : ''})`];
    for (const issue of Array.isArray(body.issues) ? body.issues : []) {
      const { path, message: why } = (issue ?? {}) as { path?: unknown; message?: unknown };
      lines.push(`  ${path ? `${plain(path)}: ` : ''}${plain(why)}`);
    }
    if (requestId && status >= 500) lines.push(`  request id ${requestId}`);
    super(lines.join('\n'));
    if (detail !== undefined) this.detail = detail;
    if (reason !== undefined) this.reason = reason;
    if (requestId !== undefined) this.requestId = requestId;
  }
}

/** The message of a network failure, with a hint for certificate problems. */
export function networkMessage(error: unknown, url: string): string {
  const e = error as NodeJS.ErrnoException;
  const code = e.code ?? '';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code))
    return `cannot verify the TLS certificate of ${new URL(url).host} (${code}); set GEOPLANE_CA_FILE to the CA that signed it`;
  if (code === 'ECONNREFUSED')
    return `cannot connect to ${new URL(url).host}: connection refused (is the API running?)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `cannot resolve ${new URL(url).hostname} (${code}): check the URL`;
  if (/TIMEOUT|ETIMEDOUT/.test(code)) return `no answer from ${new URL(url).host} in time (${code})`;
  return `request to ${new URL(url).host} failed: ${plain(e.message || code)}`;
}

/** The answer of one call of the generated client. */
type Answer<T> = { data?: T; error?: unknown; response: Response };

/** Lists are read in pages of this many. */
const PAGE = 100;

/**
 * The API calls the CLI makes, all through the typed client generated from docs/openapi.json
 * (client/, ADR 0096); this class only turns its answers into the CLI's errors.
 */
export class GeoPlaneClient {
  private readonly api: TypedClient;

  constructor(readonly connection: Connection) {
    this.api = createGeoPlaneClient({
      baseUrl: connection.baseUrl,
      apiKey: connection.apiKey,
      // Redirects are not followed: fetch would send X-API-Key to wherever a 3xx points (it drops
      // only Authorization and Cookie across origins), an http:// target included (ADR 0109).
      requestInitExt: {
        redirect: 'manual',
        ...(connection.dispatcher ? { dispatcher: connection.dispatcher } : {}),
      },
    });
  }

  /** One call: its data, or a CliError (an ApiError for an error answer). */
  private async call<T>(send: () => Promise<Answer<T>>): Promise<{ status: number; data: T }> {
    let answer: Answer<T>;
    try {
      answer = await send();
    } catch (error) {
      if (error instanceof SyntaxError) throw new CliError('the API answered with a body that is not JSON');
      // fetch rejects with "fetch failed"; the cause carries the socket's, DNS's or TLS's code.
      const cause = (error as Error | undefined)?.cause;
      if (cause === undefined && !(error instanceof TypeError)) throw error;
      throw new UnreachableError(networkMessage(cause ?? error, this.connection.baseUrl));
    }
    const { status } = answer.response;
    if (status >= 300 && status < 400) {
      const to = answer.response.headers.get('location');
      throw new CliError(
        `the API answered with a redirect (HTTP ${status}${to ? ` to ${plain(to)}` : ''}); the CLI does not follow redirects, so that the API key goes nowhere else: use the final URL with --url`,
      );
    }
    try {
      return { status, data: dataOf(answer) };
    } catch (error) {
      if (!(error instanceof GeoPlaneApiError)) throw error;
      if (error.body) throw new ApiError(error.status, String(error.body.message), error.body);
      throw new ApiError(error.status, error.text ? `the API answered: ${error.text.slice(0, 200)}` : '');
    }
  }

  private path(workspace: string, id?: string): { workspace: string; import: string } {
    if (!workspace.trim()) throw new UsageError('a workspace is required (--workspace)');
    if (id !== undefined && !id.trim()) throw new UsageError('an import id is required');
    return { workspace, import: id ?? '' };
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
    const path = { workspace: this.path(workspace).workspace };
    return (
      await this.call(() =>
        this.api.POST('/api/v1/workspaces/{workspace}/imports', { params: { path }, body: input }),
      )
    ).data;
  }

  async startImport(workspace: string, id: string): Promise<ImportJob> {
    const path = this.path(workspace, id);
    return (
      await this.call(() =>
        this.api.POST('/api/v1/workspaces/{workspace}/imports/{import}/start', { params: { path } }),
      )
    ).data;
  }

  async getImport(workspace: string, id: string): Promise<ImportJob> {
    const path = this.path(workspace, id);
    return (
      await this.call(() =>
        this.api.GET('/api/v1/workspaces/{workspace}/imports/{import}', { params: { path } }),
      )
    ).data;
  }

  async publishImport(workspace: string, id: string): Promise<ImportJob> {
    const path = this.path(workspace, id);
    return (
      await this.call(() =>
        this.api.POST('/api/v1/workspaces/{workspace}/imports/{import}/publish', { params: { path } }),
      )
    ).data;
  }

  async rollbackImport(workspace: string, id: string): Promise<ImportJob> {
    const path = this.path(workspace, id);
    return (
      await this.call(() =>
        this.api.POST('/api/v1/workspaces/{workspace}/imports/{import}/rollback', { params: { path } }),
      )
    ).data;
  }

  /** Queues a failed import again where it failed (load, publish or rollback). */
  async retryImport(workspace: string, id: string): Promise<ImportJob> {
    const path = this.path(workspace, id);
    return (
      await this.call(() =>
        this.api.POST('/api/v1/workspaces/{workspace}/imports/{import}/retry', { params: { path } }),
      )
    ).data;
  }

  /** DELETE: 202 with the import (cancelling) or 204 (cancelled at once). */
  async cancelImport(workspace: string, id: string): Promise<ImportJob | undefined> {
    const path = this.path(workspace, id);
    const answer = await this.call(() =>
      this.api.DELETE('/api/v1/workspaces/{workspace}/imports/{import}', { params: { path } }),
    );
    return answer.status === 204 ? undefined : answer.data;
  }

  /** One page of a workspace's imports, as the API answers it. */
  async importsPage(
    workspace: string,
    options: { status?: ImportJob['status']; limit?: number; cursor?: string } = {},
  ): Promise<ImportList> {
    const path = { workspace: this.path(workspace).workspace };
    const query = {
      limit: options.limit ?? PAGE,
      ...(options.status ? { status: options.status } : {}),
      ...(options.cursor ? { cursor: options.cursor } : {}),
    };
    return (
      await this.call(() =>
        this.api.GET('/api/v1/workspaces/{workspace}/imports', { params: { path, query } }),
      )
    ).data;
  }

  /** Every import of a workspace, in the order they were created (all pages). */
  async listImports(workspace: string, status?: ImportJob['status']): Promise<ImportJob[]> {
    const all: ImportJob[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.importsPage(workspace, {
        ...(status ? { status } : {}),
        ...(cursor ? { cursor } : {}),
      });
      all.push(...page.imports);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  /** Every event of an import, oldest first (all pages). */
  async importHistory(workspace: string, id: string): Promise<ImportEvent[]> {
    const path = this.path(workspace, id);
    const all: ImportEvent[] = [];
    let cursor: string | undefined;
    do {
      const query = { limit: PAGE, ...(cursor ? { cursor } : {}) };
      const page = (
        await this.call(() =>
          this.api.GET('/api/v1/workspaces/{workspace}/imports/{import}/history', {
            params: { path, query },
          }),
        )
      ).data;
      all.push(...page.events);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  /** Every service of a workspace (all pages). */
  async listServices(workspace: string): Promise<Service[]> {
    const path = { workspace: this.path(workspace).workspace };
    const all: Service[] = [];
    let cursor: string | undefined;
    do {
      const query = { limit: PAGE, ...(cursor ? { cursor } : {}) };
      const page = (
        await this.call(() =>
          this.api.GET('/api/v1/workspaces/{workspace}/services', { params: { path, query } }),
        )
      ).data;
      all.push(...page.services);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  /** Every layer of a service (all pages). */
  async listLayers(workspace: string, service: string): Promise<Layer[]> {
    if (!service.trim()) throw new UsageError('a service is required (--service)');
    const path = { workspace: this.path(workspace).workspace, service };
    const all: Layer[] = [];
    let cursor: string | undefined;
    do {
      const query = { limit: PAGE, ...(cursor ? { cursor } : {}) };
      const page = (
        await this.call(() =>
          this.api.GET('/api/v1/workspaces/{workspace}/services/{service}/layers', {
            params: { path, query },
          }),
        )
      ).data;
      all.push(...page.layers);
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  }

  async getDeletionOperation(id: string): Promise<DeletionOperation> {
    return (await this.call(() => this.api.GET('/api/v1/deletions/{id}', { params: { path: { id } } }))).data;
  }
}
