import { randomUUID } from 'node:crypto';
import type { DataSourceGateway, DiscoveredLayer } from './datasource.ts';
import { InvalidInputError, NotFoundError, RuleViolationError } from './errors.ts';
import { NAME_PATTERN, NAME_RULE } from './identifiers.ts';
import { lastWriterWinsOn } from './last-writer-wins.ts';
import type { Page, PageQuery } from './page.ts';
import { isSystemRole } from './roles.ts';
import type { SecretBox } from './secrets.ts';
import { liveConnection, requirePostgis, type Service, type ServiceRepository } from './services.ts';
import { checkVersion } from './workspaces.ts';

/** A dimension of a layer (time, elevation, …). */
export interface Dimension {
  name: string;
  units: string;
  extent: string;
  default?: string;
  source_property?: string;
  end_property?: string;
  multiple_values?: boolean;
  nearest_value?: boolean;
  current?: boolean;
}

/** A read-only SQL view as stored. */
export interface SqlView {
  sql: string;
  geometry_column: string;
  geometry_type?: string;
  srid?: number;
  id_column: string;
  properties?: { name: string; type: string }[];
  read_only: true;
}

/** A published (or draft) layer. */
export interface Layer {
  id: string;
  workspace_id: string;
  service_id: string;
  source_layer: string;
  public_id: string;
  title: string;
  description?: string;
  crs_default: number;
  enabled: boolean;
  public: boolean;
  allowed_roles: string[];
  dimensions: Dimension[];
  /** Workspace styles (by name) the layer is drawn with; each must exist (counted on the style). */
  default_style?: string;
  /** Absent on layers stored before styles existed (read as []). */
  styles?: string[];
  is_sql_view: boolean;
  sql_view?: SqlView;
  geometry_type?: string;
  native_extent?: { min_x: number; min_y: number; max_x: number; max_y: number; srid: number };
  version: number;
  created_at: string;
  updated_at: string;
}

/** What a public id points at. */
export interface PublicIdMarker {
  kind: 'layer' | 'group';
  target_id: string;
  service_id?: string;
  /** How many layer groups list this resource as a member. */
  member_of_count: number;
}

/** Port: layers and the public id namespace. */
export interface LayerRepository {
  /** Stores the layer, claims its public id, checks the service, counts custom role references. */
  create(layer: Layer): Promise<void>;
  find(workspaceId: string, serviceId: string, layerId: string): Promise<Layer | undefined>;
  list(workspaceId: string, serviceId: string, limit: number, cursor?: string): Promise<Page<Layer>>;
  update(previous: Layer, next: Layer): Promise<void>;
  /** Deletes the layer unless a group contains it (DependencyConflictError). */
  delete(layer: Layer): Promise<void>;
  findPublicId(workspaceId: string, publicId: string): Promise<PublicIdMarker | undefined>;
  /** A page of every service's layers in a workspace; `keep` filters it (the page may come back short). */
  listInWorkspacePage(
    workspaceId: string,
    limit: number,
    cursor?: string,
    keep?: (layer: Layer) => boolean,
  ): Promise<Page<Layer>>;
}

/** The body of createLayer (spec 4.1; every field optional) and of updateLayer. */
export interface LayerInput {
  source_layer?: string;
  public_id?: string;
  title?: string;
  description?: string;
  crs_default?: number;
  enabled?: boolean;
  public?: boolean;
  allowed_roles?: string[];
  dimensions?: Dimension[];
  default_style?: string;
  styles?: string[];
  sql_view?: { sql: string; geometry_column: string; id_column?: string; srid?: number };
}

/** The placeholder source of SQL-view layers. */
export const SQL_VIEW_SOURCE = '_sql_view_';

/** Every style a layer uses (its default style and its styles), once each. */
export function usedStyles(layer: Pick<Layer, 'default_style' | 'styles'>): string[] {
  return [...new Set([...(layer.default_style ? [layer.default_style] : []), ...(layer.styles ?? [])])];
}

/** Custom (non built-in) role ids in a list: the ones whose reference counts the store keeps. */
export function customRoles(roles: readonly string[]): string[] {
  return [...new Set(roles.filter((r) => !isSystemRole(r)))];
}

/** Source facts learnt while validating an enabled layer. */
type Validated = Pick<Layer, 'geometry_type' | 'native_extent'> & { sql_view?: SqlView };

async function validateSource(
  gateway: DataSourceGateway,
  box: SecretBox,
  service: Service,
  layer: Pick<Layer, 'source_layer' | 'is_sql_view' | 'sql_view'>,
): Promise<Validated> {
  if (!service.enabled) {
    throw new RuleViolationError(
      'service_disabled',
      `Service '${service.name}' is disabled; enable it before publishing.`,
    );
  }
  const connection = await liveConnection(box, service);
  if (layer.is_sql_view && layer.sql_view) {
    const view = layer.sql_view;
    const described = await gateway.describeSql(connection, view.sql);
    if (!described.valid) {
      const reason = described.overran ? 'query_budget_exceeded' : 'source_unreadable';
      throw new RuleViolationError(reason, `The SQL view is not valid: ${described.error}`);
    }
    const found = described.discovered;
    if (found.geometry_column !== view.geometry_column) {
      throw new RuleViolationError(
        'source_unreadable',
        `geometry_column '${view.geometry_column}' is not the view's geometry column ('${found.geometry_column}').`,
      );
    }
    const idColumn = view.id_column || found.suggested_id_column;
    if (!idColumn || !found.columns.some((c) => c.name === idColumn)) {
      throw new RuleViolationError(
        'source_unreadable',
        'The SQL view needs an id_column that the view returns.',
      );
    }
    if (!(await gateway.checkIdColumn(connection, view.sql, idColumn))) {
      throw new RuleViolationError(
        'source_unreadable',
        `id_column '${idColumn}' is not unique and non-null in the view.`,
      );
    }
    return {
      geometry_type: found.geometry_type,
      sql_view: {
        ...view,
        id_column: idColumn,
        geometry_type: found.geometry_type,
        srid: view.srid ?? found.srid,
        properties: found.columns,
      },
    };
  }
  const probe = await gateway.probeLayer(connection, layer.source_layer);
  if (!probe.ok)
    throw new RuleViolationError(
      'source_unreadable',
      `Source layer '${layer.source_layer}' can't be published: ${probe.reason}`,
    );
  return { geometry_type: probe.layer.geometry_type, ...extentOf(probe.layer) };
}

function extentOf(d: DiscoveredLayer): Pick<Layer, 'native_extent'> {
  return d.extent ? { native_extent: { ...d.extent, srid: d.srid } } : {};
}

/**
 * A layer's source facts (geometry type, extent) read again after its rows changed underneath it
 * (an import's replace or append, ADR 0127). Its version moves, so what is cached by it lets go.
 * A disabled layer is left as it is (it is validated when enabled).
 */
export async function refreshLayerSource(
  repo: LayerRepository,
  gateway: DataSourceGateway,
  box: SecretBox,
  service: Service,
  current: Layer,
  now = new Date(),
): Promise<Layer> {
  return lastWriterWinsOn(
    current,
    () => requireLayer(repo, service, current.id),
    async (previous) => {
      if (!previous.enabled || previous.is_sql_view) return previous;
      const validated = await validateSource(gateway, box, service, previous);
      const next: Layer = {
        ...previous,
        ...validated,
        version: previous.version + 1,
        updated_at: now.toISOString(),
      };
      if (!validated.native_extent) delete next.native_extent;
      await repo.update(previous, next);
      return next;
    },
  );
}

/** Shapes a layer from input (defaults of DESIGN §8), without validating the source. */
function shape(
  input: LayerInput,
  base?: Layer,
): Omit<Layer, 'id' | 'workspace_id' | 'service_id' | 'version' | 'created_at' | 'updated_at'> {
  const sqlView = input.sql_view ?? (input.source_layer === undefined ? base?.sql_view : undefined);
  const isSqlView = Boolean(sqlView);
  const sourceLayer = isSqlView ? SQL_VIEW_SOURCE : (input.source_layer ?? base?.source_layer);
  if (input.source_layer !== undefined && input.sql_view !== undefined) {
    throw new InvalidInputError('ambiguous_source', 'Give either source_layer or sql_view, not both.');
  }
  if (!sourceLayer) throw new InvalidInputError('source_required', 'source_layer or sql_view is required.');
  const publicId = input.public_id ?? base?.public_id ?? (isSqlView ? undefined : sourceLayer);
  if (!publicId) throw new InvalidInputError('public_id_required', 'An SQL view layer needs a public_id.');
  if (!NAME_PATTERN.test(publicId)) {
    throw new InvalidInputError('invalid_public_id', `public_id '${publicId}' ${NAME_RULE}.`);
  }
  const stored: SqlView | undefined = sqlView
    ? {
        sql: sqlView.sql,
        geometry_column: sqlView.geometry_column,
        id_column: sqlView.id_column ?? '',
        ...(sqlView.srid !== undefined ? { srid: sqlView.srid } : {}),
        read_only: true,
      }
    : undefined;
  const description = input.description ?? base?.description;
  const defaultStyle = input.default_style ?? base?.default_style;
  return {
    source_layer: sourceLayer,
    public_id: publicId,
    title: input.title ?? (input.public_id === undefined ? base?.title : undefined) ?? publicId,
    ...(description ? { description } : {}),
    crs_default: input.crs_default ?? base?.crs_default ?? sqlView?.srid ?? 4326,
    enabled: input.enabled ?? base?.enabled ?? true,
    public: input.public ?? base?.public ?? false,
    allowed_roles: [...new Set(input.allowed_roles ?? base?.allowed_roles ?? [])],
    dimensions: input.dimensions ?? base?.dimensions ?? [],
    ...(defaultStyle ? { default_style: defaultStyle } : {}),
    styles: [...new Set(input.styles ?? base?.styles ?? [])],
    is_sql_view: isSqlView,
    ...(stored ? { sql_view: stored } : {}),
  };
}

/** Guards an SQL view's text even for drafts: hostile SQL is never stored. */
async function guardView(gateway: DataSourceGateway, service: Service, layer: Pick<Layer, 'sql_view'>) {
  if (!layer.sql_view) return;
  const schemas = service.type === 'postgis' ? service.connection.schemas : undefined;
  const verdict = await gateway.guardSql(layer.sql_view.sql, schemas);
  if (!verdict.ok)
    throw new RuleViolationError('source_unreadable', `The SQL view is not allowed: ${verdict.error}`);
}

/** The ports the layer use cases take: the store, the service's data source and the key service. */
export interface LayerDeps {
  layers: LayerRepository;
  gateway: DataSourceGateway;
  secrets: SecretBox;
}

/** The layer a change names: the service the request resolved and the `{layer}` of the path. */
export interface LayerCommand {
  service: Service;
  layer: string;
  ifMatch?: string;
}

/** A page of the layers of the service the request resolved (listLayers). */
export function listLayers(
  { layers }: Pick<LayerDeps, 'layers'>,
  { service, limit, cursor }: PageQuery & { service: Pick<Service, 'workspace_id' | 'id'> },
): Promise<Page<Layer>> {
  return layers.list(service.workspace_id, service.id, limit, cursor);
}

/** Reads a layer of the service the request resolved (getLayer): 404 for a missing one. */
export function getLayer(
  { layers }: Pick<LayerDeps, 'layers'>,
  { service, layer }: Omit<LayerCommand, 'ifMatch'>,
): Promise<Layer> {
  return requireLayer(layers, service, layer);
}

/**
 * Publishes a layer (spec 4.1, §3): an enabled layer is validated against its source first
 * (422 unreadable, 503 source down); `enabled: false` stores an offline draft untouched.
 */
export async function createLayer(
  { layers: repo, gateway, secrets: box }: LayerDeps,
  { service: named, body: input, now = new Date() }: { service: Service; body: LayerInput; now?: Date },
): Promise<Layer> {
  // Layers publish PostGIS tables; a raster mosaic is 422 even for an offline draft.
  const service = requirePostgis(named);
  const shaped = shape(input);
  await guardView(gateway, service, shaped);
  const validated = shaped.enabled ? await validateSource(gateway, box, service, shaped) : {};
  const ts = now.toISOString();
  const layer: Layer = {
    id: randomUUID(),
    workspace_id: service.workspace_id,
    service_id: service.id,
    ...shaped,
    ...validated,
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  await repo.create(layer);
  return layer;
}

/** Reads a layer of a service. */
export async function requireLayer(
  repo: LayerRepository,
  service: Pick<Service, 'workspace_id' | 'id'>,
  layerId: string,
): Promise<Layer> {
  const layer = await repo.find(service.workspace_id, service.id, layerId.toLowerCase());
  if (!layer)
    throw new NotFoundError('layer_not_found', `Layer '${layerId}' does not exist in this service.`);
  return layer;
}

/**
 * Updates a layer (PUT; omitted fields keep their values). Enabling a draft, or changing the
 * source of an enabled layer, validates the source first.
 */
export async function updateLayer(
  { layers: repo, gateway, secrets: box }: LayerDeps,
  { service, layer, body: input, ifMatch, now = new Date() }: LayerCommand & { body: LayerInput; now?: Date },
): Promise<Layer> {
  const current = await requireLayer(repo, service, layer);
  // Without If-Match a lost race is applied again to the layer as it now is (ADR 0075).
  return lastWriterWinsOn(
    current,
    () => requireLayer(repo, service, current.id),
    async (previous) => {
      checkVersion(previous, ifMatch);
      const shaped = shape(input, previous);
      await guardView(gateway, service, shaped);
      const sourceChanged =
        shaped.source_layer !== previous.source_layer ||
        JSON.stringify(shaped.sql_view) !== JSON.stringify(previous.sql_view);
      const mustValidate = shaped.enabled && (!previous.enabled || sourceChanged);
      const validated = mustValidate
        ? await validateSource(gateway, box, service, shaped)
        : sourceChanged
          ? {}
          : {
              geometry_type: previous.geometry_type,
              native_extent: previous.native_extent,
              sql_view: previous.sql_view,
            };
      const next: Layer = {
        ...previous,
        ...shaped,
        ...validated,
        version: previous.version + 1,
        updated_at: now.toISOString(),
      };
      for (const k of [
        'geometry_type',
        'native_extent',
        'sql_view',
        'description',
        'default_style',
      ] as const) {
        if (next[k] === undefined) delete next[k];
      }
      await repo.update(previous, next);
      return next;
    },
  );
}

/** Deletes a layer (409 while a layer group contains it); without If-Match a concurrent update doesn't stop it. */
export async function deleteLayer(
  { layers: repo }: Pick<LayerDeps, 'layers'>,
  { service, layer, ifMatch }: LayerCommand,
): Promise<void> {
  const current = await requireLayer(repo, service, layer);
  await lastWriterWinsOn(
    current,
    () => requireLayer(repo, { workspace_id: current.workspace_id, id: current.service_id }, current.id),
    async (previous) => {
      checkVersion(previous, ifMatch);
      await repo.delete(previous);
    },
  );
}

/** The API view of a layer. */
export function presentLayer(l: Layer) {
  return { ...l, styles: l.styles ?? [] };
}

/** True when `q` is a case-insensitive substring of the layer's public id or title (listWorkspaceLayers). */
export function layerMatches(layer: Pick<Layer, 'public_id' | 'title'>, q: string): boolean {
  const needle = q.toLowerCase();
  return layer.public_id.toLowerCase().includes(needle) || layer.title.toLowerCase().includes(needle);
}

/**
 * listWorkspaceLayers: a page of the layers of every service of a workspace, each with its
 * service's name; `q` keeps those whose public id or title contains it (any case). Layers of a
 * service being deleted are left out, as listLayers answers 404 for it (ADR 0130).
 */
export async function listWorkspaceLayers(
  deps: { layers: LayerRepository; services: Pick<ServiceRepository, 'findById'> },
  command: { workspaceId: string; limit: number; cursor?: string; q?: string },
): Promise<Page<Layer & { service_name: string }>> {
  const q = command.q?.trim();
  const page = await deps.layers.listInWorkspacePage(
    command.workspaceId,
    command.limit,
    command.cursor,
    q ? (layer) => layerMatches(layer, q) : undefined,
  );
  const ids = [...new Set(page.items.map((l) => l.service_id))];
  const services = new Map(
    await Promise.all(
      ids.map(async (id) => [id, await deps.services.findById(command.workspaceId, id)] as const),
    ),
  );
  const items = page.items.flatMap((layer) => {
    const service = services.get(layer.service_id);
    return service && service.status === 'active' ? [{ ...layer, service_name: service.name }] : [];
  });
  return { items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}
