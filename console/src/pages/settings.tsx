/**
 * A workspace's service settings: WMS, OGC API Features and OGC API Tiles, one form each, and the
 * WFS, WCS and WMTS forms of protocol-settings.tsx (which uses the parts exported here). Each
 * document is read with its ETag (its version, "0" while the defaults apply) and replaced whole
 * with If-Match. Limits show their server ceiling as a hint (and as the number input's max); the
 * API still decides, and its refusal is shown beside the field it names.
 */
import './settings.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { allOf, api, ConsoleApiError, call, type Schemas } from '../api.ts';
import {
  ErrorNote,
  Field,
  issueFor,
  Notice,
  PageTitle,
  TextInput,
  useAction,
  useLoad,
} from '../components.tsx';
import { paths } from '../routes.ts';
import { WCSSettingsForm, WFSSettingsForm, WMTSSettingsForm } from './protocol-settings.tsx';

type WMSSettings = Schemas['WMSSettings'];
type OGCAPISettings = Schemas['OGCAPISettings'];
type OGCTilesSettings = Schemas['OGCTilesSettings'];

/**
 * The server ceilings workspace limits may not exceed (ADR 0050), as the API enforces them
 * (shared/domain/settings.ts `ceilings`; the console test compares the inputs' max with them).
 */
const CEILINGS = {
  wms: {
    max_width: 4096,
    max_height: 4096,
    max_pixels: 4096 * 4096,
    max_render_features: 50_000,
    max_render_vertices: 5_000_000,
  },
  ogcapi: { limit_default: 10_000, limit_max: 10_000, max_offset: 1_000_000 },
  tiles: {
    max_features: 50_000,
    max_vertices: 5_000_000,
    max_tile_bytes: 10 * 1024 * 1024,
    persistent_cache_quota_bytes: 1024 ** 4,
  },
} as const;

type WmsExtension = NonNullable<WMSSettings['extensions']>[number];
const WMS_EXTENSIONS = allOf<WmsExtension>({
  'dynamic-raster': true,
  'advanced-labels': true,
  'rendering-transformations': true,
  compositing: true,
  'z-order': true,
  'dynamic-style': true,
  'remote-graphics': true,
});
const MVT = 'application/vnd.mapbox-vector-tile';
type MapTileFormat = NonNullable<OGCTilesSettings['settings']['map_tiles']['formats']>[number];
const MAP_TILE_FORMATS = allOf<MapTileFormat>({ 'image/png': true, 'image/jpeg': true, 'image/webp': true });
const TILES_VERSIONS = ['1.0.0'] as const;

const number = new Intl.NumberFormat('en');

/** "1–4,096 pixels (the server ceiling). Empty: the server's default." */
export function limitHint(max: number, unit: string, extra?: string): string {
  return `1–${number.format(max)} ${unit} (the server ceiling). ${extra ? `${extra} ` : ''}Empty: the server's default.`;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Refusals without issues, by the field they concern. */
const REASON_FIELDS: Record<string, string> = {
  unknown_tile_matrix_set: 'settings.tile_matrix_sets',
  tile_matrix_sets_required: 'settings.tile_matrix_sets',
  map_tile_formats_required: 'settings.map_tiles',
  vector_tile_formats_required: 'settings.vector_tiles',
  duplicate_extension: 'extensions',
};

/**
 * What a 400 says about one field of the document: its schema issue (`body.<path>`), or the
 * detail of a rule the API checks beyond the schema (a ceiling, limit_default above limit_max)
 * when that detail names the field.
 */
function fieldError(error: unknown, path: string): string | undefined {
  const issue = issueFor(error, `body.${path}`);
  if (issue) return issue;
  if (!(error instanceof ConsoleApiError) || error.status !== 400 || error.body?.issues?.length)
    return undefined;
  const detail = error.body?.detail ?? '';
  if (error.reason && REASON_FIELDS[error.reason] === path) return detail;
  return new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(path)}(?![A-Za-z0-9_])`).test(detail)
    ? detail
    : undefined;
}

/** The form's own error note, unless a field already shows it. */
function FormError({ error, fields }: { error: unknown; fields: string[] }) {
  if (fields.some((field) => fieldError(error, field))) {
    return (
      <p class="error-summary" role="alert">
        Not saved: see the field marked above.
      </p>
    );
  }
  return <ErrorNote error={error} />;
}

/** A number input kept as text (empty: unset). */
export function NumberField({
  label,
  hint,
  value,
  onInput,
  min,
  max,
  step,
  error,
}: {
  label: string;
  hint: string;
  value: string;
  onInput: (value: string) => void;
  min: number;
  max?: number;
  step?: string;
  error?: string;
}) {
  return (
    <TextInput
      label={label}
      hint={hint}
      error={error}
      type="number"
      inputMode={step === 'any' ? 'decimal' : 'numeric'}
      min={min}
      max={max}
      step={step ?? '1'}
      value={value}
      onInput={onInput}
    />
  );
}

/** A labelled checkbox with an optional hint and an error in place. */
export function Check({
  label,
  hint,
  checked,
  onChange,
  error,
}: {
  label: string;
  hint?: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  error?: string;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="check">
      <input
        id={id}
        type="checkbox"
        checked={checked}
        aria-describedby={described || undefined}
        aria-invalid={error ? true : undefined}
        onChange={(e) => onChange(e.currentTarget.checked)}
      />
      <label for={id}>{label}</label>
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
      {error ? <ErrorNote error={error} id={`${id}-error`} /> : null}
    </div>
  );
}

/** A set of choices (checkboxes) in a fieldset with its legend. */
export function Choices<T extends string>({
  legend,
  hint,
  options,
  selected,
  onChange,
  error,
  lead,
  children,
}: {
  legend: string;
  hint?: string;
  options: readonly { value: T; label: string }[];
  selected: readonly T[];
  onChange: (selected: T[]) => void;
  error?: string;
  /** Shown before the choices (a switch they depend on). */
  lead?: ComponentChildren;
  children?: ComponentChildren;
}) {
  const id = useId();
  return (
    <fieldset
      class="choices"
      aria-describedby={hint ? `${id}-hint` : undefined}
      aria-invalid={error ? true : undefined}
    >
      <legend>{legend}</legend>
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
      {lead}
      <div class="choice-list">
        {options.map((option) => (
          <label key={option.value} class="choice">
            <input
              type="checkbox"
              checked={selected.includes(option.value)}
              onChange={(e) =>
                onChange(
                  e.currentTarget.checked
                    ? [...selected, option.value]
                    : selected.filter((value) => value !== option.value),
                )
              }
            />{' '}
            {option.label}
          </label>
        ))}
      </div>
      {children}
      {error ? <ErrorNote error={error} /> : null}
    </fieldset>
  );
}

/** "" → undefined; otherwise the number typed (NaN stays NaN: the API refuses it in place). */
export const numberOf = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));
export const textOf = (value: number | undefined) => (value === undefined ? '' : String(value));
/** Empty text is left out of the document. */
export const optionalText = (text: string) => (text.trim() === '' ? undefined : text);

/** Drops the keys whose value is undefined (the document is replaced whole). */
export function defined<T extends object>(doc: T): T {
  return Object.fromEntries(Object.entries(doc).filter(([, value]) => value !== undefined)) as T;
}

/** A settings document with the ETag it was read with. */
interface Loaded<T> {
  doc: T;
  etag: string;
}

async function withEtag<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<Loaded<T>> {
  const result = await pending;
  const doc = await call(Promise.resolve(result));
  return { doc, etag: result.response.headers.get('ETag') ?? '"0"' };
}

const versionOf = (etag: string) => etag.replace(/^W\//, '').replace(/"/g, '');

/** The settings documents, by the last segment of their path. */
export interface SettingsDocuments {
  wms: WMSSettings;
  ogcapi: OGCAPISettings;
  'ogc-tiles': OGCTilesSettings;
  wfs: Schemas['WFSSettings'];
  wcs: Schemas['WCSSettings'];
  wmts: Schemas['WMTSSettings'];
}
type SettingsKind = keyof SettingsDocuments;

/**
 * Read and replace (If-Match) one settings document. The paths answer and take the same
 * shape per kind, which the generated types only know path by path: the path is named as the WMS
 * one for the call, and the document typed back by its kind.
 */
function settingsCalls<K extends SettingsKind>(workspace: string, kind: K) {
  const path =
    `/api/v1/workspaces/{workspace}/settings/${kind}` as '/api/v1/workspaces/{workspace}/settings/wms';
  const params = { path: { workspace } };
  return {
    load: () => withEtag(api.GET(path, { params })) as Promise<Loaded<SettingsDocuments[K]>>,
    save: (body: SettingsDocuments[K], etag: string) =>
      withEtag(
        api.PUT(path, { params: { ...params, header: { 'If-Match': etag } }, body: body as WMSSettings }),
      ) as Promise<Loaded<SettingsDocuments[K]>>,
  };
}

/** Load, edit and save one settings document: the form state is derived again after each save. */
export function useSettingsForm<K extends SettingsKind, F>(
  workspace: string,
  kind: K,
  toForm: (doc: SettingsDocuments[K]) => F,
  fromForm: (form: F) => SettingsDocuments[K],
) {
  const loaded = useLoad(() => settingsCalls(workspace, kind).load(), [workspace, kind]);
  const [current, setCurrent] = useState<Loaded<SettingsDocuments[K]>>();
  const [form, setForm] = useState<F>();
  const [saved, setSaved] = useState<string>();
  useEffect(() => {
    if (loaded.data) {
      setCurrent(loaded.data);
      setForm(toForm(loaded.data.doc));
    }
  }, [loaded.data]);
  const submit = useAction(async (event: Event) => {
    event.preventDefault();
    if (!current || !form) return;
    setSaved(undefined);
    const next = await settingsCalls(workspace, kind).save(fromForm(form), current.etag);
    setCurrent(next);
    setForm(toForm(next.doc));
    setSaved(`Saved (version ${versionOf(next.etag)}).`);
  });
  const update = (patch: Partial<F>) => setForm((f) => (f ? { ...f, ...patch } : f));
  return { loaded, current, form, update, submit, saved };
}

/** What every service's settings have: whether it is served, and anonymously, its title and abstract. */
export interface CommonForm {
  enabled: boolean;
  public: boolean;
  title: string;
  abstract: string;
}

const COMMON_FIELDS = ['enabled', 'public', 'title', 'abstract'];

export const commonForm = (d: {
  enabled: boolean;
  public?: boolean;
  title?: string;
  abstract?: string;
}): CommonForm => ({
  enabled: d.enabled,
  public: d.public ?? false,
  title: d.title ?? '',
  abstract: d.abstract ?? '',
});

export const commonDoc = (f: CommonForm) => ({
  enabled: f.enabled,
  public: f.public,
  title: optionalText(f.title),
  abstract: optionalText(f.abstract),
});

/**
 * One service's settings form: its heading, the fields every service has, the service's own
 * (`children`, given the form, its update and the refusal's message per field), and the save row.
 */
export function SettingsSection<F extends CommonForm>({
  id,
  service,
  state,
  fields,
  children,
}: {
  id: string;
  /** The service as the labels name it ("WMS"). */
  service: string;
  state: {
    loaded: { error?: unknown; loading: boolean; reload: () => Promise<void> };
    current?: { etag: string };
    form?: F;
    update: (patch: Partial<F>) => void;
    submit: { run: (event: Event) => Promise<unknown>; busy: boolean; error: unknown };
    saved?: string;
  };
  /** The service's own fields, as the API names them in a refusal. */
  fields: string[];
  children: (
    form: F,
    update: (patch: Partial<F>) => void,
    err: (path: string) => string | undefined,
  ) => ComponentChildren;
}) {
  const { form, update, submit, current, loaded } = state;
  const err = (path: string) => fieldError(submit.error, path);
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{service}</h2>
      <ErrorNote error={loaded.error} />
      {form && current ? (
        <form noValidate onSubmit={(event) => void submit.run(event)}>
          <Check
            label={`Serve ${service}`}
            checked={form.enabled}
            onChange={(enabled) => update({ enabled } as Partial<F>)}
            error={err('enabled')}
          />
          <Check
            label={`Public ${service} (anonymous callers may read it)`}
            checked={form.public}
            onChange={(value) => update({ public: value } as Partial<F>)}
            error={err('public')}
          />
          <TextInput
            label={`${service} title`}
            hint="At most 256 characters."
            maxLength={256}
            value={form.title}
            onInput={(title) => update({ title } as Partial<F>)}
            error={err('title')}
          />
          <Field label={`${service} abstract`} hint="At most 4096 characters." error={err('abstract')}>
            {(props) => (
              <textarea
                {...props}
                class="settings-abstract"
                maxLength={4096}
                rows={3}
                value={form.abstract}
                onInput={(e) => update({ abstract: e.currentTarget.value } as Partial<F>)}
              />
            )}
          </Field>
          {children(form, update, err)}
          <SaveRow
            label={`Save ${service} settings`}
            busy={submit.busy}
            error={submit.error}
            fields={[...COMMON_FIELDS, ...fields]}
            saved={state.saved}
            onReload={() => void loaded.reload()}
            version={versionOf(current.etag)}
          />
        </form>
      ) : loaded.loading ? (
        <p>Loading…</p>
      ) : null}
    </section>
  );
}

/** The parts every settings form ends with: save, the refusal, the 412 way out, the notice. */
function SaveRow({
  label,
  busy,
  error,
  fields,
  saved,
  onReload,
  version,
}: {
  label: string;
  busy: boolean;
  error: unknown;
  fields: string[];
  saved?: string;
  onReload: () => void;
  version: string;
}) {
  return (
    <>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {label}
        </button>
        <span class="hint">
          Version {version}
          {version === '0' ? ' (the defaults)' : ''}
        </span>
      </div>
      <FormError error={error} fields={fields} />
      {error instanceof ConsoleApiError && error.status === 412 ? (
        <p>
          These settings were saved elsewhere meanwhile.{' '}
          <button type="button" onClick={onReload}>
            Load the current settings
          </button>{' '}
          (this discards your edits).
        </p>
      ) : null}
      <Notice>{saved}</Notice>
    </>
  );
}

// ---- WMS ----

interface WMSForm extends CommonForm {
  default_style: string;
  max_width: string;
  max_height: string;
  max_pixels: string;
  max_render_features: string;
  max_render_vertices: string;
  simplify_enabled: '' | 'on' | 'off';
  simplify_pixel_tolerance: string;
  extensions: NonNullable<WMSSettings['extensions']>;
}

const WMS_FIELDS = [
  'default_style',
  'max_width',
  'max_height',
  'max_pixels',
  'max_render_features',
  'max_render_vertices',
  'simplify_enabled',
  'simplify_pixel_tolerance',
  'extensions',
];

const wmsForm = (d: WMSSettings): WMSForm => ({
  ...commonForm(d),
  default_style: d.default_style ?? '',
  max_width: textOf(d.max_width),
  max_height: textOf(d.max_height),
  max_pixels: textOf(d.max_pixels),
  max_render_features: textOf(d.max_render_features),
  max_render_vertices: textOf(d.max_render_vertices),
  simplify_enabled: d.simplify_enabled === undefined ? '' : d.simplify_enabled ? 'on' : 'off',
  simplify_pixel_tolerance: textOf(d.simplify_pixel_tolerance),
  extensions: d.extensions ?? [],
});

const wmsDoc = (f: WMSForm): WMSSettings =>
  defined({
    ...commonDoc(f),
    default_style: optionalText(f.default_style.trim()),
    max_width: numberOf(f.max_width),
    max_height: numberOf(f.max_height),
    max_pixels: numberOf(f.max_pixels),
    max_render_features: numberOf(f.max_render_features),
    max_render_vertices: numberOf(f.max_render_vertices),
    simplify_enabled: f.simplify_enabled === '' ? undefined : f.simplify_enabled === 'on',
    simplify_pixel_tolerance: numberOf(f.simplify_pixel_tolerance),
    extensions: f.extensions.length ? f.extensions : undefined,
  });

function WMSSettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'wms', wmsForm, wmsDoc);
  const styles = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/styles', {
          params: { path: { workspace }, query: { limit: 100 } },
        }),
      ),
    [workspace],
  );
  const c = CEILINGS.wms;
  const listId = useId();
  return (
    <SettingsSection id="wms" service="WMS" state={s} fields={WMS_FIELDS}>
      {(form, update, err) => (
        <>
          <TextInput
            label="Default style"
            hint={
              <>
                A <a href={paths.styles(workspace)}>style</a> of this workspace (1–128 characters); empty:
                none.
              </>
            }
            error={err('default_style')}
            list={listId}
            maxLength={128}
            value={form.default_style}
            onInput={(text) => update({ default_style: text })}
          />
          <datalist id={listId}>
            {(styles.data?.styles ?? []).map((style) => (
              <option key={style.id} value={style.name} />
            ))}
          </datalist>
          <div class="limits">
            <NumberField
              label="Max image width"
              hint={limitHint(c.max_width, 'pixels')}
              min={1}
              max={c.max_width}
              value={form.max_width}
              onInput={(max_width) => update({ max_width })}
              error={err('max_width')}
            />
            <NumberField
              label="Max image height"
              hint={limitHint(c.max_height, 'pixels')}
              min={1}
              max={c.max_height}
              value={form.max_height}
              onInput={(max_height) => update({ max_height })}
              error={err('max_height')}
            />
            <NumberField
              label="Max pixels per image"
              hint={limitHint(c.max_pixels, 'pixels', 'Width × height.')}
              min={1}
              max={c.max_pixels}
              value={form.max_pixels}
              onInput={(max_pixels) => update({ max_pixels })}
              error={err('max_pixels')}
            />
            <NumberField
              label="Max features rendered"
              hint={limitHint(c.max_render_features, 'features', 'Per request.')}
              min={1}
              max={c.max_render_features}
              value={form.max_render_features}
              onInput={(max_render_features) => update({ max_render_features })}
              error={err('max_render_features')}
            />
            <NumberField
              label="Max vertices rendered"
              hint={limitHint(c.max_render_vertices, 'vertices', 'Per request.')}
              min={1}
              max={c.max_render_vertices}
              value={form.max_render_vertices}
              onInput={(max_render_vertices) => update({ max_render_vertices })}
              error={err('max_render_vertices')}
            />
          </div>
          <Field label="Simplify geometries" error={err('simplify_enabled')}>
            {(props) => (
              <select
                {...props}
                value={form.simplify_enabled}
                onChange={(e) =>
                  update({ simplify_enabled: e.currentTarget.value as WMSForm['simplify_enabled'] })
                }
              >
                <option value="">The server's default</option>
                <option value="on">On</option>
                <option value="off">Off</option>
              </select>
            )}
          </Field>
          <NumberField
            label="Simplification tolerance"
            hint="0–100 pixels (decimals allowed). Empty: the server's default."
            min={0}
            max={100}
            step="any"
            value={form.simplify_pixel_tolerance}
            onInput={(simplify_pixel_tolerance) => update({ simplify_pixel_tolerance })}
            error={err('simplify_pixel_tolerance')}
          />
          <Choices
            legend="WMS extensions"
            hint="The vendor extensions this workspace's WMS answers."
            options={WMS_EXTENSIONS.map((value) => ({ value, label: value }))}
            selected={form.extensions}
            onChange={(extensions) => update({ extensions })}
            error={err('extensions')}
          />
        </>
      )}
    </SettingsSection>
  );
}

// ---- OGC API Features ----

interface OGCAPIForm extends CommonForm {
  limit_default: string;
  limit_max: string;
  max_offset: string;
}

const OGCAPI_FIELDS = ['limit_default', 'limit_max', 'max_offset'];

const ogcapiForm = (d: OGCAPISettings): OGCAPIForm => ({
  ...commonForm(d),
  limit_default: textOf(d.limit_default),
  limit_max: textOf(d.limit_max),
  max_offset: textOf(d.max_offset),
});

const ogcapiDoc = (f: OGCAPIForm): OGCAPISettings =>
  defined({
    ...commonDoc(f),
    limit_default: numberOf(f.limit_default),
    limit_max: numberOf(f.limit_max),
    max_offset: numberOf(f.max_offset),
  });

function OGCAPISettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'ogcapi', ogcapiForm, ogcapiDoc);
  const c = CEILINGS.ogcapi;
  return (
    <SettingsSection id="ogcapi" service="OGC API Features" state={s} fields={OGCAPI_FIELDS}>
      {(form, update, err) => (
        <div class="limits">
          <NumberField
            label="Default page size"
            hint={limitHint(c.limit_default, 'features', 'At most the max page size.')}
            min={1}
            max={c.limit_default}
            value={form.limit_default}
            onInput={(limit_default) => update({ limit_default })}
            error={err('limit_default')}
          />
          <NumberField
            label="Max page size"
            hint={limitHint(c.limit_max, 'features', 'The largest limit a client may ask for.')}
            min={1}
            max={c.limit_max}
            value={form.limit_max}
            onInput={(limit_max) => update({ limit_max })}
            error={err('limit_max')}
          />
          <NumberField
            label="Max offset"
            hint={limitHint(c.max_offset, 'features', 'How deep paging may go.')}
            min={1}
            max={c.max_offset}
            value={form.max_offset}
            onInput={(max_offset) => update({ max_offset })}
            error={err('max_offset')}
          />
        </div>
      )}
    </SettingsSection>
  );
}

// ---- OGC API Tiles ----

interface TilesForm extends CommonForm {
  versions: '1.0.0'[];
  tile_matrix_sets: string[];
  vector_enabled: boolean;
  vector_formats: (typeof MVT)[];
  map_enabled: boolean;
  map_formats: MapTileFormat[];
  cache_enabled: boolean;
  max_features: string;
  max_vertices: string;
  max_tile_bytes: string;
  persistent_cache_quota_bytes: string;
}

const TILES_FIELDS = [
  'versions',
  'settings.tile_matrix_sets',
  'settings.vector_tiles',
  'settings.map_tiles',
  'settings.cache_enabled',
  'settings.max_features',
  'settings.max_vertices',
  'settings.max_tile_bytes',
  'settings.persistent_cache_quota_bytes',
];

const tilesForm = (d: OGCTilesSettings): TilesForm => ({
  ...commonForm(d),
  versions: d.versions ?? ['1.0.0'],
  tile_matrix_sets: d.settings.tile_matrix_sets,
  vector_enabled: d.settings.vector_tiles.enabled,
  vector_formats: (d.settings.vector_tiles.formats ?? []) as (typeof MVT)[],
  map_enabled: d.settings.map_tiles.enabled,
  map_formats: d.settings.map_tiles.formats ?? [],
  cache_enabled: d.settings.cache_enabled,
  max_features: textOf(d.settings.max_features),
  max_vertices: textOf(d.settings.max_vertices),
  max_tile_bytes: textOf(d.settings.max_tile_bytes),
  persistent_cache_quota_bytes: textOf(d.settings.persistent_cache_quota_bytes),
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
      max_features: numberOf(f.max_features),
      max_vertices: numberOf(f.max_vertices),
      max_tile_bytes: numberOf(f.max_tile_bytes),
      persistent_cache_quota_bytes: numberOf(f.persistent_cache_quota_bytes),
    }),
  });

function TilesSettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'ogc-tiles', tilesForm, tilesDoc);
  const sets = useLoad(
    () => call(api.GET('/api/v1/tile-matrix-sets', { params: { query: { limit: 100 } } })),
    [],
  );
  const c = CEILINGS.tiles;
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
            options={TILES_VERSIONS.map((value) => ({ value, label: value }))}
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
              onChange={(vector_formats) => update({ vector_formats: vector_formats as (typeof MVT)[] })}
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
          <div class="limits">
            <NumberField
              label="Max features per tile"
              hint={limitHint(c.max_features, 'features')}
              min={1}
              max={c.max_features}
              value={form.max_features}
              onInput={(max_features) => update({ max_features })}
              error={err('settings.max_features')}
            />
            <NumberField
              label="Max vertices per tile"
              hint={limitHint(c.max_vertices, 'vertices')}
              min={1}
              max={c.max_vertices}
              value={form.max_vertices}
              onInput={(max_vertices) => update({ max_vertices })}
              error={err('settings.max_vertices')}
            />
            <NumberField
              label="Max tile size"
              hint={limitHint(c.max_tile_bytes, 'bytes (10 MiB)')}
              min={1}
              max={c.max_tile_bytes}
              value={form.max_tile_bytes}
              onInput={(max_tile_bytes) => update({ max_tile_bytes })}
              error={err('settings.max_tile_bytes')}
            />
            <NumberField
              label="Persistent cache quota"
              hint={limitHint(c.persistent_cache_quota_bytes, 'bytes (1 TiB)')}
              min={1}
              max={c.persistent_cache_quota_bytes}
              value={form.persistent_cache_quota_bytes}
              onInput={(persistent_cache_quota_bytes) => update({ persistent_cache_quota_bytes })}
              error={err('settings.persistent_cache_quota_bytes')}
            />
          </div>
        </>
      )}
    </SettingsSection>
  );
}

export function SettingsPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  return (
    <>
      <PageTitle title={`Settings · ${workspace}`}>Settings of {workspace}</PageTitle>
      <p>
        Each service's settings are one document, saved whole. Reading them needs the viewer role; saving
        needs the admin role in this workspace.
      </p>
      <WMSSettingsForm workspace={workspace} />
      <OGCAPISettingsForm workspace={workspace} />
      <TilesSettingsForm workspace={workspace} />
      <WFSSettingsForm workspace={workspace} />
      <WCSSettingsForm workspace={workspace} />
      <WMTSSettingsForm workspace={workspace} />
    </>
  );
}
