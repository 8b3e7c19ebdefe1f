/**
 * The resources the route table's examples show (issue #14, ADR 0095): one workspace `roads-demo`
 * with a PostGIS service, a layer, a group, a style and its asset, so the examples of different
 * operations tell one story. Each operation declares its own examples next to it; these are the
 * bodies several of them share. test/contract/openapi-examples.test.ts checks every example
 * against the operation's zod schemas.
 */

export const ids = {
  workspace: '5b0e6f0c-3c2a-4d8e-9f6b-1a2b3c4d5e6f',
  service: '0f6d8a52-7b1e-4c3d-8a9b-2c3d4e5f6a7b',
  mosaic: '9a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d',
  layer: '3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7',
  group: '6c7d8e9f-0a1b-4c2d-9e3f-4a5b6c7d8e9f',
  apiKey: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a',
  mapping: '8e9f0a1b-2c3d-4e4f-9a5b-6c7d8e9f0a1b',
  deletion: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  style: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e',
  asset: '4c5d6e7f-8a9b-4cad-be0f-1a2b3c4d5e6f',
  import: 'c0ffee00-1234-4abc-8def-0123456789ab',
  granule: 'd1e2f3a4-b5c6-4d7e-8f9a-0b1c2d3e4f5a',
  importService: 'e2f3a4b5-c6d7-4e8f-9a0b-1c2d3e4f5a6b',
} as const;

export const created = '2026-03-02T09:15:00.000Z';
export const updated = '2026-03-04T16:40:12.000Z';

export const workspace = {
  id: ids.workspace,
  name: 'roads-demo',
  description: 'Road network of the demo region',
  version: 1,
  created_at: created,
  updated_at: created,
};

export const postgisService = {
  id: ids.service,
  workspace_id: ids.workspace,
  name: 'roads-db',
  type: 'postgis' as const,
  connection: {
    host: 'db.internal.example',
    port: 5432,
    database: 'gis',
    user: 'geoplane_reader',
    sslmode: 'require' as const,
    schemas: ['public'],
  },
  enabled: true,
  configured_secrets: ['password'],
  version: 1,
  created_at: created,
  updated_at: created,
};

export const layer = {
  id: ids.layer,
  workspace_id: ids.workspace,
  service_id: ids.service,
  source_layer: 'public.roads',
  public_id: 'roads',
  title: 'Roads',
  crs_default: 4326,
  enabled: true,
  public: false,
  allowed_roles: [],
  dimensions: [],
  default_style: 'roads-line',
  styles: ['roads-line'],
  is_sql_view: false,
  geometry_type: 'MULTILINESTRING',
  native_extent: { min_x: 5.9, min_y: 45.8, max_x: 10.5, max_y: 47.8, srid: 4326 },
  version: 1,
  created_at: created,
  updated_at: created,
};

export const layerGroup = {
  id: ids.group,
  workspace_id: ids.workspace,
  public_id: 'basemap',
  title: 'Basemap',
  members: [{ resource: 'roads', style: 'roads-line', opacity: 0.8 }],
  version: 1,
  created_at: created,
  updated_at: created,
};

export const styleSummary = {
  id: ids.style,
  workspace_id: ids.workspace,
  name: 'roads-line',
  format: 'mapbox' as const,
  title: 'Roads as lines',
  asset_refs: ['marker'],
  version: 1,
  created_at: created,
  updated_at: created,
};

/** A MapLibre style drawing the roads and a `marker` icon (`asset:marker`, the style asset it references). */
export const mapboxStyleBody = {
  version: 8,
  sources: { roads: { type: 'vector', url: 'https://tiles.example.org/roads.json' } },
  layers: [
    {
      id: 'roads',
      type: 'line',
      source: 'roads',
      'source-layer': 'roads',
      paint: { 'line-color': '#d33', 'line-width': 2 },
    },
    {
      id: 'poi',
      type: 'symbol',
      source: 'roads',
      'source-layer': 'poi',
      layout: { 'icon-image': 'asset:marker' },
    },
  ],
};

export const styleAsset = {
  id: ids.asset,
  workspace_id: ids.workspace,
  name: 'marker',
  content_type: 'image/png' as const,
  size_bytes: 70,
  sha256: '6b7fa434f92a8b80aab02d9bf1a12e49ffcae424e4013a1c4f68b67e3d2bbcd0',
  version: 1,
  created_at: created,
  updated_at: created,
};

export const apiKey = {
  id: ids.apiKey,
  key_prefix: 'gpk_q3Zt8WbR',
  name: 'ci-publisher',
  role_id: 'editor',
  revoked: false,
  created_at: created,
  expires_at: '2031-03-02T00:00:00.000Z',
  owner_email: 'ci@example.org',
  workspace_id: ids.workspace,
  version: 1,
};

export const claimMapping = {
  id: ids.mapping,
  workspace_id: ids.workspace,
  claim_name: 'groups',
  claim_value: 'gis-editors',
  role_id: 'editor',
  priority: 10,
  version: 1,
  created_at: created,
};

export const authMe = {
  authenticated: true as const,
  principal: '4f1c2b7e-alice',
  auth_method: 'jwt' as const,
  super_admin: false,
  global_role: null,
  api_key_id: null,
  session_id: null,
  session_expires_at: null,
  session_idle_expires_at: null,
  workspaces: [{ id: ids.workspace, name: 'roads-demo', role: 'editor' }],
};

export const deletionPlan = {
  target: { scope: 'service' as const, id: ids.service, name: 'roads-db', type: 'postgis' },
  layers: {
    count: 1,
    items: [{ id: ids.layer, public_id: 'roads' }],
    truncated: false,
  },
  layer_groups: { count: 1, items: [{ id: ids.group, public_id: 'basemap' }], truncated: false },
  mosaic_granules: 0,
  style_references: [{ style: 'roads-line', references: 1 }],
  role_references: [],
  total: 3,
};

export const deletion = {
  id: ids.deletion,
  scope: 'service' as const,
  workspace_id: ids.workspace,
  target_id: ids.service,
  target_name: 'roads-db',
  status: 'pending' as const,
  phase: 'layer_groups',
  plan: deletionPlan,
  progress: { total: 3, deleted: 0 },
  attempt_count: 1,
  created_at: updated,
  updated_at: updated,
};

export const granule = {
  id: ids.granule,
  workspace_id: ids.workspace,
  service_id: ids.mosaic,
  source_uri: 's3://imagery-bucket/ortho/2025/tile_0_0.tif',
  crs: 'EPSG:2056',
  srid: 2056,
  bbox: [2600000, 1200000, 2601000, 1201000] as [number, number, number, number],
  width: 4000,
  height: 4000,
  band_count: 3,
  data_type: 'Byte',
  resolution_x: 0.25,
  resolution_y: 0.25,
  time: '2025-06-01T00:00:00.000Z',
  version: 1,
  created_at: created,
};

export const importPlan = {
  layers: [
    {
      source_layer: 'parcels',
      public_id: 'parcels',
      title: 'Parcels',
      enabled: true,
      public: false,
      fields: [
        { source: 'PARCEL_NO', target: 'parcel_no', type: 'text' as const, include: true },
        { source: 'AREA_M2', target: 'area_m2', type: 'double precision' as const, include: true },
      ],
      source_srid: 2056,
      target_srid: 4326,
    },
  ],
};

/** What discovery says of a GeoPackage whose CRS is defined without an EPSG code. */
export const importCrsWarning =
  "Layer 'parcels' uses a CRS (srs_id 100000) without an EPSG code; give source_srid in the import plan.";

/**
 * An import waiting for its plan: the file's CRS has no EPSG code, so the default plan can't be
 * loaded until the plan names it (`source_srid`, see importPlan).
 */
export const importJob = {
  id: ids.import,
  workspace_id: ids.workspace,
  name: 'parcels-2026',
  source_kind: 'upload' as const,
  source_filename: 'parcels.gpkg',
  status: 'awaiting_plan' as const,
  phase: 'transform' as const,
  plan: {
    layers: [
      {
        source_layer: 'parcels',
        public_id: 'parcels',
        title: 'parcels',
        enabled: true,
        public: false,
        geometry_column: 'geom',
        fields: [
          { source: 'PARCEL_NO', target: 'parcel_no', type: 'text' as const, include: true },
          { source: 'AREA_M2', target: 'area_m2', type: 'double precision' as const, include: true },
        ],
      },
    ],
  },
  discovery: {
    format: 'geopackage',
    size_bytes: 5242880,
    layers: [
      {
        name: 'parcels',
        fields: [
          { name: 'PARCEL_NO', type: 'text' },
          { name: 'AREA_M2', type: 'double precision' },
        ],
        geometry_type: 'MultiPolygon',
        srid: null,
        feature_count: 12840,
        bbox: [2600000, 1200000, 2610000, 1210000],
      },
    ],
    warnings: [importCrsWarning],
  },
  service_name: 'imports',
  auto_publish: false,
  processed_bytes: 5242880,
  processed_features: 0,
  processed_layers: 0,
  total_layers: 1,
  retry_count: 0,
  warnings: [importCrsWarning, "The CRS of 'parcels' is unknown: PUT the plan with source_srid for it."],
  version: 5,
  created_by: 'jwt:4f1c2b7e-alice',
  created_at: created,
  updated_at: '2026-03-02T09:16:52.000Z',
  started_at: '2026-03-02T09:16:40.000Z',
};

/** A custom tile matrix set (OGC 2D-TMS 2.0 JSON): the Swiss LV95 grid, one matrix. */
export const tileMatrixSetDefinition = {
  id: 'SwissLV95',
  title: 'Swiss LV95 grid',
  crs: 'http://www.opengis.net/def/crs/EPSG/0/2056',
  orderedAxes: ['E', 'N'],
  tileMatrices: [
    {
      id: '0',
      scaleDenominator: 14285714.2857,
      cellSize: 4000,
      cornerOfOrigin: 'topLeft',
      pointOfOrigin: [2420000, 1350000],
      tileWidth: 256,
      tileHeight: 256,
      matrixWidth: 1,
      matrixHeight: 1,
    },
  ],
};

/** That set as stored: its definition, revision and digest. */
export const tileMatrixSet = {
  id: 'SwissLV95',
  built_in: false,
  definition: tileMatrixSetDefinition,
  revision: 1,
  digest: '5f1fbce4539268696009e40a68980b92d308a35c10f772fb442e74b03abfabca',
  created_at: created,
  updated_at: created,
};

/** A custom role's policy, as the role's pages show it. */
export const rolePolicy = {
  id: '4f0c9a1e2b3d4c5e6f70',
  workspace: '*',
  service: 'management',
  operation: 'createLayer',
  action: 'write',
  version: 1,
  created_at: created,
};

/** Tile matrix sets as the lists show them: two built-in, one the workspace's own. */
export const tileMatrixSets = {
  webMercatorQuad: {
    id: 'WebMercatorQuad',
    title: 'Google Maps Compatible for the World',
    uri: 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad',
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    built_in: true,
  },
  worldCRS84Quad: {
    id: 'WorldCRS84Quad',
    title: 'CRS84 for the World',
    uri: 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WorldCRS84Quad',
    crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84',
    built_in: true,
  },
  swissLV95: {
    id: 'SwissLV95',
    title: 'Swiss LV95 grid',
    crs: 'http://www.opengis.net/def/crs/EPSG/0/2056',
    built_in: false,
  },
};
