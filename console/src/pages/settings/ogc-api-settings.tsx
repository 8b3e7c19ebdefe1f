/** The OGC API Features settings form (paging limits) and the OGC API Tiles one (sets, formats, limits). */

import type { SETTINGS_CEILINGS } from '#client/settings-limits.ts';
import { allOf, api, call, type Schemas } from '#console/api.ts';
import { useLoad } from '#console/components/data.tsx';
import { ErrorNote } from '#console/components/forms.tsx';
import { paths } from '#console/routes.ts';
import { Check, Choices, defined, type Limit, LimitFields, limitNumbers, limitTexts } from './fields.tsx';
import {
  type CommonForm,
  commonDoc,
  commonForm,
  SettingsSection,
  useSettingsForm,
} from './settings-form.tsx';

type OGCAPISettings = Schemas['OGCAPISettings'];
type OGCTilesSettings = Schemas['OGCTilesSettings'];

type TilesVersion = NonNullable<OGCTilesSettings['versions']>[number];
const TILES_VERSIONS = allOf<TilesVersion>({ '1.0.0': true });
type VectorTileFormat = NonNullable<OGCTilesSettings['settings']['vector_tiles']['formats']>[number];
const MVT: VectorTileFormat = 'application/vnd.mapbox-vector-tile';
type MapTileFormat = NonNullable<OGCTilesSettings['settings']['map_tiles']['formats']>[number];
const MAP_TILE_FORMATS = allOf<MapTileFormat>({ 'image/png': true, 'image/jpeg': true, 'image/webp': true });

// ---- OGC API Features ----

type OGCAPILimit = keyof typeof SETTINGS_CEILINGS.ogcapi;

const OGCAPI_LIMITS: Limit<OGCAPILimit>[] = [
  {
    field: 'limit_default',
    label: 'Default page size',
    unit: 'features',
    extra: 'At most the max page size.',
  },
  {
    field: 'limit_max',
    label: 'Max page size',
    unit: 'features',
    extra: 'The largest limit a client may ask for.',
  },
  { field: 'max_offset', label: 'Max offset', unit: 'features', extra: 'How deep paging may go.' },
];

interface OGCAPIForm extends CommonForm, Record<OGCAPILimit, string> {}

const OGCAPI_FIELDS = OGCAPI_LIMITS.map((limit) => limit.field);

const ogcapiForm = (d: OGCAPISettings): OGCAPIForm => ({ ...commonForm(d), ...limitTexts(d, OGCAPI_LIMITS) });

const ogcapiDoc = (f: OGCAPIForm): OGCAPISettings =>
  defined({ ...commonDoc(f), ...limitNumbers(f, OGCAPI_LIMITS) });

export function OGCAPISettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'ogcapi', ogcapiForm, ogcapiDoc);
  return (
    <SettingsSection id="ogcapi" service="OGC API Features" state={s} fields={OGCAPI_FIELDS}>
      {(form, update, err) => (
        <LimitFields of="ogcapi" limits={OGCAPI_LIMITS} values={form} onInput={update} err={err} />
      )}
    </SettingsSection>
  );
}

// ---- OGC API Tiles ----

type TilesLimit = keyof typeof SETTINGS_CEILINGS.tiles;

const TILES_LIMITS: Limit<TilesLimit>[] = [
  { field: 'max_features', label: 'Max features per tile', unit: 'features' },
  { field: 'max_vertices', label: 'Max vertices per tile', unit: 'vertices' },
  { field: 'max_tile_bytes', label: 'Max tile size', unit: 'bytes (10 MiB)' },
  { field: 'persistent_cache_quota_bytes', label: 'Persistent cache quota', unit: 'bytes (1 TiB)' },
];

interface TilesForm extends CommonForm, Record<TilesLimit, string> {
  versions: TilesVersion[];
  tile_matrix_sets: string[];
  vector_enabled: boolean;
  vector_formats: VectorTileFormat[];
  map_enabled: boolean;
  map_formats: MapTileFormat[];
  cache_enabled: boolean;
}

const TILES_FIELDS = [
  'versions',
  'settings.tile_matrix_sets',
  'settings.vector_tiles',
  'settings.map_tiles',
  'settings.cache_enabled',
  ...TILES_LIMITS.map((limit) => `settings.${limit.field}`),
];

const tilesForm = (d: OGCTilesSettings): TilesForm => ({
  ...commonForm(d),
  versions: d.versions ?? ['1.0.0'],
  tile_matrix_sets: d.settings.tile_matrix_sets,
  vector_enabled: d.settings.vector_tiles.enabled,
  vector_formats: d.settings.vector_tiles.formats ?? [],
  map_enabled: d.settings.map_tiles.enabled,
  map_formats: d.settings.map_tiles.formats ?? [],
  cache_enabled: d.settings.cache_enabled,
  ...limitTexts(d.settings, TILES_LIMITS),
});

const tilesDoc = (f: TilesForm): OGCTilesSettings =>
  defined({
    ...commonDoc(f),
    versions: f.versions,
    settings: defined({
      tile_matrix_sets: f.tile_matrix_sets,
      vector_tiles: defined({
        enabled: f.vector_enabled,
        formats: f.vector_formats.length ? f.vector_formats : undefined,
      }),
      map_tiles: defined({
        enabled: f.map_enabled,
        formats: f.map_formats.length ? f.map_formats : undefined,
      }),
      cache_enabled: f.cache_enabled,
      ...limitNumbers(f, TILES_LIMITS),
    }),
  });

export function TilesSettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'ogc-tiles', tilesForm, tilesDoc);
  const sets = useLoad(
    () => call(api.GET('/api/v1/tile-matrix-sets', { params: { query: { limit: 100 } } })),
    [],
  );
  const setOptions = [
    ...(sets.data?.tile_matrix_sets ?? []).map((set) => ({
      value: set.id,
      label: `${set.id}${set.title ? ` — ${set.title}` : ''}${set.built_in ? '' : ' (custom)'}`,
    })),
    ...(s.form?.tile_matrix_sets ?? [])
      .filter((id) => !sets.data?.tile_matrix_sets.some((set) => set.id === id))
      .map((id) => ({ value: id, label: id })),
  ];
  return (
    <SettingsSection id="tiles" service="OGC API Tiles" state={s} fields={TILES_FIELDS}>
      {(form, update, err) => (
        <>
          <Choices
            legend="OGC API Tiles versions"
            hint="At least one."
            options={TILES_VERSIONS}
            selected={form.versions}
            onChange={(versions) => update({ versions })}
            error={err('versions')}
          />
          <Choices
            legend="Tile matrix sets"
            hint="At most 16; at least one while the API is served."
            options={setOptions}
            selected={form.tile_matrix_sets}
            onChange={(tile_matrix_sets) => update({ tile_matrix_sets })}
            error={err('settings.tile_matrix_sets')}
          >
            <ErrorNote error={sets.error} />
            <p class="hint">
              <a href={paths.tileMatrixSets}>All tile matrix sets</a>
            </p>
          </Choices>
          <div class="tile-kinds">
            <Choices
              legend="Vector tiles"
              options={[{ value: MVT, label: `Format ${MVT}` }]}
              selected={form.vector_formats}
              onChange={(vector_formats) => update({ vector_formats })}
              error={err('settings.vector_tiles')}
              lead={
                <Check
                  label="Serve vector tiles"
                  checked={form.vector_enabled}
                  onChange={(vector_enabled) => update({ vector_enabled })}
                />
              }
            />
            <Choices
              legend="Map tiles"
              options={MAP_TILE_FORMATS.map((value) => ({ value, label: `Format ${value}` }))}
              selected={form.map_formats}
              onChange={(map_formats) => update({ map_formats })}
              error={err('settings.map_tiles')}
              lead={
                <Check
                  label="Serve map tiles"
                  checked={form.map_enabled}
                  onChange={(map_enabled) => update({ map_enabled })}
                />
              }
            />
          </div>
          <Check
            label="Cache tiles"
            checked={form.cache_enabled}
            onChange={(cache_enabled) => update({ cache_enabled })}
            error={err('settings.cache_enabled')}
          />
          <LimitFields
            of="tiles"
            limits={TILES_LIMITS}
            values={form}
            onInput={update}
            err={err}
            at="settings."
          />
        </>
      )}
    </SettingsSection>
  );
}
