import { randomUUID } from 'node:crypto';
import {
  type DataSourceGateway,
  type DiscoveredLayer,
  type PostgisConnectionInfo,
  type SqlValidation,
  sqlValidationBody,
} from './datasource.ts';
import { InvalidInputError, NotFoundError, RuleViolationError } from './errors.ts';
import { UUID_PATTERN } from './identifiers.ts';
import { lastWriterWinsOn } from './last-writer-wins.ts';
import type { Page, WorkspacePageQuery } from './page.ts';
import type { SecretBox } from './secrets.ts';
import { checkVersion } from './workspaces.ts';

interface ServiceBase {
  id: string;
  workspace_id: string;
  name: string;
  /** The encrypted password (never returned). */
  password_enc?: string;
  enabled: boolean;
  status: 'active' | 'deleting';
  /** The recursive deletion that hid it. */
  deletion_id?: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** Where a raster mosaic's GeoTIFF/COG granules live: a local directory or `s3://bucket/prefix`. */
export interface MosaicConnectionInfo {
  root_uri: string;
}

/** A PostGIS data source. */
export interface PostgisService extends ServiceBase {
  type: 'postgis';
  connection: PostgisConnectionInfo;
}

/** A raster mosaic of GeoTIFF/COG granules (ADR 0060). */
export interface MosaicService extends ServiceBase {
  type: 'raster_mosaic';
  connection: MosaicConnectionInfo;
}

/** A data source inside a workspace. */
export type Service = PostgisService | MosaicService;

/** Port: service persistence. */
export interface ServiceRepository {
  create(service: Service): Promise<void>;
  findById(workspaceId: string, id: string): Promise<Service | undefined>;
  findByName(workspaceId: string, name: string): Promise<Service | undefined>;
  list(workspaceId: string, limit: number, cursor?: string): Promise<Page<Service>>;
  update(previous: Service, next: Service): Promise<void>;
}

/**
 * The record a `{service}` path parameter named within a workspace, as an earlier lookup found it
 * (the authorizer's, ADR 0099): `service` undefined means it does not exist. Its `password_enc`
 * is withheld (`WITHHELD_SECRET`): only reads that never decrypt take it.
 */
export interface KnownService {
  workspaceId: string;
  idOrName: string;
  service: Service | undefined;
}

/** Stands in for a password that was not carried (ADR 0099): it says one is configured, nothing more. */
export const WITHHELD_SECRET = 'withheld';

/** What a `{service}` parameter may name: an id when UUID-shaped, and always a name (as requireService reads). */
export function serviceCandidates(idOrName: string): { id?: string; name: string } {
  return { ...(UUID_PATTERN.test(idOrName) ? { id: idOrName.toLowerCase() } : {}), name: idOrName };
}

/**
 * Resolves `{service}` (id or name) within a workspace; hidden services (being deleted) are not
 * found unless `includeDeleting` (deleteService answers with their operation). A `known` lookup of
 * the same parameter in the same workspace saves the reads (reads only: its password is withheld).
 */
export async function requireService(
  repo: Pick<ServiceRepository, 'findById' | 'findByName'>,
  workspaceId: string,
  idOrName: string,
  includeDeleting = false,
  known?: KnownService,
): Promise<Service> {
  let found: Service | undefined;
  if (known && known.workspaceId === workspaceId && known.idOrName === idOrName) found = known.service;
  else {
    const { id, name } = serviceCandidates(idOrName);
    if (id) found = await repo.findById(workspaceId, id);
    if (!found) found = await repo.findByName(workspaceId, name);
  }
  if (!found || (found.status !== 'active' && !(includeDeleting && found.status === 'deleting'))) {
    throw new NotFoundError('service_not_found', `Service '${idOrName}' does not exist in this workspace.`);
  }
  return found;
}

/** Encryption context binding a password to its service. */
function secretContext(s: { workspace_id: string; id: string }) {
  return { workspace_id: s.workspace_id, service_id: s.id };
}

/** Refuses PostGIS operations (discover, validate-sql, layers, test-connection) on other services (422). */
export function requirePostgis(service: Service): PostgisService {
  if (service.type !== 'postgis') {
    throw new RuleViolationError(
      'not_a_postgis_service',
      `Service '${service.name}' is of type '${service.type}'; this operation needs a PostGIS service.`,
    );
  }
  return service;
}

/** The connection with its decrypted password, for talking to the source (422 for a non-PostGIS service). */
export async function liveConnection(box: SecretBox, any: Service) {
  const service = requirePostgis(any);
  if (service.password_enc === WITHHELD_SECRET)
    throw new Error('a service read without its secret was used to connect');
  const password = service.password_enc
    ? await box.decrypt(service.password_enc, secretContext(service))
    : undefined;
  return { ...service.connection, ...(password !== undefined ? { password } : {}) };
}

/** Reason of a connection target the network policy refuses (ADR 0074). */
export const CONNECTION_TARGET_NOT_ALLOWED = 'connection_target_not_allowed';

/** Reason of a login a service may not use: the import database's own (ADR 0105). */
export const CONNECTION_LOGIN_RESERVED = 'connection_login_reserved';

/**
 * Port: may the server connect to `host:port` at all (ADR 0074), and as this login (ADR 0105)?
 * Throws RuleViolationError `connection_target_not_allowed` for a refused target and
 * InvalidInputError `connection_login_reserved` for the import database's loader login or
 * another import's reader login; a name that does not resolve now is not refused (connecting to
 * it fails like any unreachable source, and every connection is checked again).
 */
export interface ConnectionTargetCheck {
  checkTarget(connection: Pick<PostgisConnectionInfo, 'host' | 'port' | 'user' | 'schemas'>): Promise<void>;
}

/** The gateway createService and updateService need: the data source plus the target check. */
export type ServiceGateway = DataSourceGateway & ConnectionTargetCheck;

/** A refused target in a request body is the caller's bad input (400), not a broken stored service (422). */
async function asBadRequest<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RuleViolationError && error.reason === CONNECTION_TARGET_NOT_ALLOWED) {
      throw new InvalidInputError(error.reason, error.message);
    }
    throw error;
  }
}

/**
 * Refuses a target the network policy forbids (400 `connection_target_not_allowed`, enabled or
 * not: nothing is written) and, for an enabled service, a connection that can't be opened (400
 * `connection_failed` with the uniform message of ADR 0074).
 */
async function admitConnection(
  gateway: ServiceGateway,
  connection: PostgisConnectionInfo & { password?: string },
  enabled: boolean,
) {
  await asBadRequest(() => gateway.checkTarget(connection));
  if (!enabled) return;
  const result = await asBadRequest(() => gateway.testConnection(connection));
  if (!result.ok) {
    throw new InvalidInputError(
      'connection_failed',
      `The connection could not be opened: ${result.message ?? 'unknown error'}`,
    );
  }
}

export type ServiceInput =
  | {
      name: string;
      type: 'postgis';
      connection: PostgisConnectionInfo & { password?: string };
      enabled?: boolean;
    }
  | { name: string; type: 'raster_mosaic'; connection: MosaicConnectionInfo; enabled?: boolean };

/** The ports the service use cases take: the store, the data source, the key service, mosaic roots. */
export interface ServiceDeps {
  services: ServiceRepository;
  gateway: ServiceGateway;
  secrets: SecretBox;
  /**
   * Whether a raster mosaic's root can be read (the raster sources' `checkRoot`); absent where only
   * PostGIS services are made (an import's publish, the local host's demo service).
   */
  roots?: { checkRoot(rootUri: string): Promise<string | undefined> };
}

/** Refuses a mosaic root that can't be read (400), when a raster_mosaic service is created or updated. */
async function requireReadableRoot(roots: ServiceDeps['roots'], input: ServiceInput): Promise<void> {
  if (input.type !== 'raster_mosaic') return;
  if (!roots) throw new Error('a raster mosaic service is made without the raster sources');
  const problem = await roots.checkRoot(input.connection.root_uri);
  if (problem) throw new InvalidInputError('root_unreadable', `root_uri can't be read: ${problem}`);
}

/**
 * Creates a service; an enabled PostGIS one must connect first, a raster mosaic's root must be
 * readable (ADR 0060). The password is stored encrypted only.
 */
export async function createService(
  { services: repo, gateway, secrets: box, roots }: ServiceDeps,
  { workspaceId, body: input, now = new Date() }: { workspaceId: string; body: ServiceInput; now?: Date },
): Promise<Service> {
  await requireReadableRoot(roots, input);
  const enabled = input.enabled ?? true;
  const ts = now.toISOString();
  const base = {
    id: randomUUID(),
    workspace_id: workspaceId,
    name: input.name,
    enabled,
    status: 'active' as const,
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  if (input.type === 'raster_mosaic') {
    const service: Service = {
      ...base,
      type: input.type,
      connection: { root_uri: input.connection.root_uri },
    };
    await repo.create(service);
    return service;
  }
  const { password, ...connection } = input.connection;
  await admitConnection(gateway, input.connection, enabled);
  const service: Service = {
    ...base,
    type: input.type,
    connection: { ...connection, schemas: connection.schemas ?? ['public'] },
  };
  if (password) service.password_enc = await box.encrypt(password, secretContext(service));
  await repo.create(service);
  return service;
}

/** One try of updateService on `current` as read. */
async function replaceService(
  repo: ServiceRepository,
  gateway: ServiceGateway,
  box: SecretBox,
  current: Service,
  input: ServiceInput,
  ifMatch: string | undefined,
  now = new Date(),
): Promise<Service> {
  checkVersion(current, ifMatch);
  if (input.type !== current.type) {
    throw new InvalidInputError('type_immutable', `A service's type can't change (it is '${current.type}').`);
  }
  const common = {
    name: input.name,
    enabled: input.enabled ?? current.enabled,
    version: current.version + 1,
    updated_at: now.toISOString(),
  };
  if (current.type === 'raster_mosaic' || input.type === 'raster_mosaic') {
    const next: Service = {
      ...(current as MosaicService),
      ...common,
      connection: { root_uri: (input.connection as MosaicConnectionInfo).root_uri },
    };
    await repo.update(current, next);
    return next;
  }
  const { password, ...connection } = input.connection;
  // A stored password goes only to the endpoint and login it was given for: otherwise whoever may
  // edit the service could point it at a server of theirs and be sent the password (issue #22).
  const was = current.connection;
  const moved =
    connection.host.toLowerCase() !== was.host.toLowerCase() ||
    connection.port !== was.port ||
    connection.database !== was.database ||
    connection.user !== was.user ||
    (connection.sslmode ?? 'prefer') !== (was.sslmode ?? 'prefer');
  if (!password && current.password_enc && moved) {
    throw new InvalidInputError(
      'password_required',
      'The connection changes its host, port, database, user or sslmode: give its password again (the stored one is sent only where it was given for).',
    );
  }
  const next: Service = {
    ...current,
    ...common,
    connection: { ...connection, schemas: connection.schemas ?? ['public'] },
  };
  if (password) next.password_enc = await box.encrypt(password, secretContext(next));
  await admitConnection(gateway, await liveConnection(box, next), next.enabled);
  await repo.update(current, next);
  return next;
}

/**
 * Replaces a service (PUT; `service` as the request resolved it): an omitted password keeps the
 * stored one; a raster mosaic's new root must be readable.
 */
export async function updateService(
  { services: repo, gateway, secrets: box, roots }: ServiceDeps,
  {
    service: current,
    body: input,
    ifMatch,
    now = new Date(),
  }: { service: Service; body: ServiceInput; ifMatch?: string; now?: Date },
): Promise<Service> {
  if (current.type === 'raster_mosaic') await requireReadableRoot(roots, input);
  // Without If-Match a lost race is applied again to the service as it now is (ADR 0075).
  return lastWriterWinsOn(
    current,
    () => requireService(repo, current.workspace_id, current.id),
    (previous) => replaceService(repo, gateway, box, previous, input, ifMatch, now),
  );
}

/** A page of the workspace's services (listServices). */
export function listServices({ services }: { services: ServiceRepository }, query: WorkspacePageQuery) {
  return services.list(query.workspaceId, query.limit, query.cursor);
}

/** The tables and views a PostGIS service's connection can publish (discoverLayers). */
export async function discoverLayers(
  { gateway, secrets }: Pick<ServiceDeps, 'gateway' | 'secrets'>,
  { service }: { service: Service },
): Promise<DiscoveredLayer[]> {
  return gateway.discoverLayers(await liveConnection(secrets, service));
}

/** Whether a SQL view would publish on this service's connection, and what it returns (validateSQLView). */
export async function validateSqlView(
  { gateway, secrets }: Pick<ServiceDeps, 'gateway' | 'secrets'>,
  { service, sql }: { service: Service; sql: string },
): Promise<SqlValidation> {
  return sqlValidationBody(await gateway.describeSql(await liveConnection(secrets, service), sql));
}

/**
 * Tries the service's connection now: any failure of the target (refused, timed out, not
 * PostgreSQL, a refused login) is `ok: false` with the reason — the answer the client asked for,
 * not an outage to retry (ADR 0087); a 503 is left to our own dependencies (the store, the key
 * service). A target the network policy forbids is a 422 `connection_target_not_allowed` (ADR 0074).
 */
export async function testExistingServiceConnection(
  { gateway, secrets }: { gateway: DataSourceGateway; secrets: SecretBox },
  { service }: { service: Service },
) {
  return gateway.testConnection(await liveConnection(secrets, service));
}

/**
 * testNewServiceConnection (ADR 0131): a connection body tried before anything is saved, under the
 * rules createService applies to the same body — a target the network policy refuses and a login
 * reserved for the import database are 400 (nothing is opened) — and answered as
 * testExistingServiceConnection answers: `ok: false` with the one uniform message for a target that
 * refuses, times out or isn't PostgreSQL.
 */
export async function testNewServiceConnection(
  { gateway }: { gateway: ServiceGateway },
  { connection }: { connection: PostgisConnectionInfo & { password?: string } },
) {
  await asBadRequest(() => gateway.checkTarget(connection));
  return asBadRequest(() => gateway.testConnection(connection));
}

/** The API view: no secret, `configured_secrets` says which are set. */
export function presentService(s: Service) {
  return {
    id: s.id,
    workspace_id: s.workspace_id,
    name: s.name,
    type: s.type,
    connection: s.connection,
    enabled: s.enabled,
    configured_secrets: s.password_enc ? ['password'] : [],
    version: s.version,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}
