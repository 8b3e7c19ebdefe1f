/**
 * The WFS, WCS and WMTS settings forms of the settings page (ADR 0133), built from the page's own
 * parts (settings.tsx): the same load / If-Match save / refusal-beside-the-field behaviour as the
 * WMS form. GeoPlane does not serve these protocols yet, and each form says so: what is saved is
 * stored and validated, and changes no response until it does.
 *
 * settings.tsx renders these forms and this module uses its parts: the cycle is safe because
 * nothing here reads an import while the modules load (only when a form renders).
 */
import { Field, TextInput } from '../components.tsx';
import { paths } from '../routes.ts';
import {
  Check,
  Choices,
  type CommonForm,
  commonDoc,
  commonForm,
  defined,
  limitHint,
  NumberField,
  numberOf,
  optionalText,
  type SettingsDocuments,
  SettingsSection,
  textOf,
  useSettingsForm,
} from './settings.tsx';

type WFSSettings = SettingsDocuments['wfs'];
type WCSSettings = SettingsDocuments['wcs'];
type WMTSSettings = SettingsDocuments['wmts'];

/**
 * The server ceilings of these documents' limits (shared/domain/settings.ts `ceilings.wfs` and
 * `ceilings.wcs`; the console test compares the inputs' max with them).
 */
const CEILINGS = {
  wfs: { max_features: 10_000, default_count: 10_000, max_offset: 1_000_000, count_timeout_ms: 10_000 },
  wcs: {
    max_cells: 4096 * 4096,
    max_output_bytes: 10 * 1024 * 1024,
    processing_timeout_ms: 15_000,
    max_dimensions: 16,
    max_axis_values: 10_000,
    max_source_granules: 1_000,
    max_temporary_bytes: 512 * 1024 * 1024,
  },
} as const;

const WCS_EXTENSIONS = [
  'xml-post',
  'range-subsetting',
  'scaling',
  'crs',
  'interpolation',
  'multidimensional',
] as const;
const WCS_FORMATS = [
  'image/tiff',
  'application/gml+xml',
  'multipart/related',
  'application/netcdf',
  'image/jp2',
] as const;
const WCS_INTERPOLATIONS = ['nearest-neighbor', 'linear'] as const;

/** What each of these forms says first. */
function NotServed({ service }: { service: string }) {
  return (
    <p class="hint">
      GeoPlane does not serve {service} yet: these settings are stored and validated, and change no response
      until it does.
    </p>
  );
}

// ---- WFS ----

interface WFSForm extends CommonForm {
  max_features: string;
  default_count: string;
  max_offset: string;
  count_timeout_ms: string;
}

const WFS_FIELDS = ['max_features', 'default_count', 'max_offset', 'count_timeout_ms'];

const wfsForm = (d: WFSSettings): WFSForm => ({
  ...commonForm(d),
  max_features: textOf(d.max_features),
  default_count: textOf(d.default_count),
  max_offset: textOf(d.max_offset),
  count_timeout_ms: textOf(d.count_timeout_ms),
});

const wfsDoc = (f: WFSForm): WFSSettings =>
  defined({
    ...commonDoc(f),
    max_features: numberOf(f.max_features),
    default_count: numberOf(f.default_count),
    max_offset: numberOf(f.max_offset),
    count_timeout_ms: numberOf(f.count_timeout_ms),
  });

/** The WFS settings: GetFeature's limits. */
export function WFSSettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'wfs', wfsForm, wfsDoc);
  const c = CEILINGS.wfs;
  return (
    <SettingsSection id="wfs" service="WFS" state={s} fields={WFS_FIELDS}>
      {(form, update, err) => (
        <>
          <NotServed service="WFS" />
          <div class="limits">
            <NumberField
              label="Max features per GetFeature"
              hint={limitHint(c.max_features, 'features', 'The largest count a client may ask for.')}
              min={1}
              max={c.max_features}
              value={form.max_features}
              onInput={(max_features) => update({ max_features })}
              error={err('max_features')}
            />
            <NumberField
              label="Default GetFeature count"
              hint={limitHint(c.default_count, 'features', 'When a client names no count; at most the max.')}
              min={1}
              max={c.default_count}
              value={form.default_count}
              onInput={(default_count) => update({ default_count })}
              error={err('default_count')}
            />
            <NumberField
              label="Max start index"
              hint={limitHint(c.max_offset, 'features', 'How deep paging may go.')}
              min={1}
              max={c.max_offset}
              value={form.max_offset}
              onInput={(max_offset) => update({ max_offset })}
              error={err('max_offset')}
            />
            <NumberField
              label="Count timeout"
              hint={limitHint(c.count_timeout_ms, 'milliseconds', 'Time spent counting numberMatched.')}
              min={1}
              max={c.count_timeout_ms}
              value={form.count_timeout_ms}
              onInput={(count_timeout_ms) => update({ count_timeout_ms })}
              error={err('count_timeout_ms')}
            />
          </div>
        </>
      )}
    </SettingsSection>
  );
}

// ---- WCS ----

type Extension = (typeof WCS_EXTENSIONS)[number];
type Format = (typeof WCS_FORMATS)[number];
type Interpolation = (typeof WCS_INTERPOLATIONS)[number];

interface WCSForm extends CommonForm {
  max_cells: string;
  max_output_bytes: string;
  processing_timeout_ms: string;
  max_dimensions: string;
  max_axis_values: string;
  max_source_granules: string;
  max_temporary_bytes: string;
  extensions: Extension[];
  output_formats: Format[];
  interpolation_methods: Interpolation[];
  /** One CRS per line. */
  allowed_subsetting_crs: string;
  allowed_output_crs: string;
}

const WCS_LIMITS = [
  'max_cells',
  'max_output_bytes',
  'processing_timeout_ms',
  'max_dimensions',
  'max_axis_values',
  'max_source_granules',
  'max_temporary_bytes',
] as const;

const WCS_FIELDS = [
  ...WCS_LIMITS,
  'extensions',
  'output_formats',
  'interpolation_methods',
  'allowed_subsetting_crs',
  'allowed_output_crs',
];

const lines = (list: string[] | undefined) => (list ?? []).join('\n');
/** The non-empty lines of a textarea; none: left out of the document. */
const listOf = (text: string) => {
  const list = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return list.length ? list : undefined;
};
const some = <T,>(list: T[]) => (list.length ? list : undefined);

const wcsForm = (d: WCSSettings): WCSForm => ({
  ...commonForm(d),
  max_cells: textOf(d.max_cells),
  max_output_bytes: textOf(d.max_output_bytes),
  processing_timeout_ms: textOf(d.processing_timeout_ms),
  max_dimensions: textOf(d.max_dimensions),
  max_axis_values: textOf(d.max_axis_values),
  max_source_granules: textOf(d.max_source_granules),
  max_temporary_bytes: textOf(d.max_temporary_bytes),
  extensions: d.extensions ?? [],
  output_formats: d.output_formats ?? [],
  interpolation_methods: d.interpolation_methods ?? [],
  allowed_subsetting_crs: lines(d.allowed_subsetting_crs),
  allowed_output_crs: lines(d.allowed_output_crs),
});

const wcsDoc = (f: WCSForm): WCSSettings =>
  defined({
    ...commonDoc(f),
    max_cells: numberOf(f.max_cells),
    max_output_bytes: numberOf(f.max_output_bytes),
    processing_timeout_ms: numberOf(f.processing_timeout_ms),
    max_dimensions: numberOf(f.max_dimensions),
    max_axis_values: numberOf(f.max_axis_values),
    max_source_granules: numberOf(f.max_source_granules),
    max_temporary_bytes: numberOf(f.max_temporary_bytes),
    extensions: some(f.extensions),
    output_formats: some(f.output_formats),
    interpolation_methods: some(f.interpolation_methods),
    allowed_subsetting_crs: listOf(f.allowed_subsetting_crs),
    allowed_output_crs: listOf(f.allowed_output_crs),
  });

/** Each WCS limit's label, unit and what it bounds. */
const WCS_LIMIT_LABELS: Record<(typeof WCS_LIMITS)[number], [string, string, string]> = {
  max_cells: ['Max cells per coverage', 'cells', 'Width × height of one response.'],
  max_output_bytes: ['Max response size', 'bytes', ''],
  processing_timeout_ms: ['Processing timeout', 'milliseconds', ''],
  max_dimensions: ['Max dimensions', 'dimensions', 'Beyond the two spatial axes.'],
  max_axis_values: ['Max values per axis', 'values', 'Of a time or elevation axis.'],
  max_source_granules: ['Max source granules', 'granules', 'Read for one request.'],
  max_temporary_bytes: ['Max temporary storage', 'bytes', 'Scratch space for one request.'],
};

/** A list of CRS names, one per line. */
function CrsField({
  label,
  value,
  onInput,
  error,
}: {
  label: string;
  value: string;
  onInput: (text: string) => void;
  error?: string;
}) {
  return (
    <Field
      label={label}
      hint="One per line: an OGC CRS URI (http://www.opengis.net/def/crs/EPSG/0/4326), EPSG:<code> or CRS:84. Empty: any."
      error={error}
    >
      {(props) => (
        <textarea
          {...props}
          class="settings-abstract"
          rows={3}
          value={value}
          onInput={(e) => onInput(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** The WCS settings: GetCoverage's limits, extensions, formats and CRSs. */
export function WCSSettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'wcs', wcsForm, wcsDoc);
  const c = CEILINGS.wcs;
  return (
    <SettingsSection id="wcs" service="WCS" state={s} fields={WCS_FIELDS}>
      {(form, update, err) => (
        <>
          <NotServed service="WCS" />
          <div class="limits">
            {WCS_LIMITS.map((field) => {
              const [label, unit, extra] = WCS_LIMIT_LABELS[field];
              return (
                <NumberField
                  key={field}
                  label={label}
                  hint={limitHint(c[field], unit, extra || undefined)}
                  min={1}
                  max={c[field]}
                  value={form[field]}
                  onInput={(value) => update({ [field]: value } as Partial<WCSForm>)}
                  error={err(field)}
                />
              );
            })}
          </div>
          <Choices
            legend="WCS extensions"
            hint="The WCS 2.0 extensions this workspace's WCS would answer."
            options={WCS_EXTENSIONS.map((value) => ({ value, label: value }))}
            selected={form.extensions}
            onChange={(extensions) => update({ extensions })}
            error={err('extensions')}
          />
          <Choices
            legend="WCS output formats"
            options={WCS_FORMATS.map((value) => ({ value, label: value }))}
            selected={form.output_formats}
            onChange={(output_formats) => update({ output_formats })}
            error={err('output_formats')}
          />
          <Choices
            legend="WCS interpolation methods"
            options={WCS_INTERPOLATIONS.map((value) => ({ value, label: value }))}
            selected={form.interpolation_methods}
            onChange={(interpolation_methods) => update({ interpolation_methods })}
            error={err('interpolation_methods')}
          />
          <CrsField
            label="Subsetting CRSs"
            value={form.allowed_subsetting_crs}
            onInput={(allowed_subsetting_crs) => update({ allowed_subsetting_crs })}
            error={err('allowed_subsetting_crs')}
          />
          <CrsField
            label="Output CRSs"
            value={form.allowed_output_crs}
            onInput={(allowed_output_crs) => update({ allowed_output_crs })}
            error={err('allowed_output_crs')}
          />
        </>
      )}
    </SettingsSection>
  );
}

// ---- WMTS ----

interface WMTSForm extends CommonForm {
  feature_info_enabled: boolean;
  vector_tiles_enabled: boolean;
  provider_name: string;
  provider_site: string;
  contact_name: string;
  contact_position: string;
  contact_email: string;
}

const WMTS_TEXTS = [
  'provider_name',
  'provider_site',
  'contact_name',
  'contact_position',
  'contact_email',
] as const;
const WMTS_FIELDS = ['feature_info_enabled', 'vector_tiles_enabled', ...WMTS_TEXTS];

const wmtsForm = (d: WMTSSettings): WMTSForm => ({
  ...commonForm(d),
  feature_info_enabled: d.feature_info_enabled ?? false,
  vector_tiles_enabled: d.vector_tiles_enabled ?? false,
  provider_name: d.provider_name ?? '',
  provider_site: d.provider_site ?? '',
  contact_name: d.contact_name ?? '',
  contact_position: d.contact_position ?? '',
  contact_email: d.contact_email ?? '',
});

const wmtsDoc = (f: WMTSForm): WMTSSettings =>
  defined({
    ...commonDoc(f),
    feature_info_enabled: f.feature_info_enabled,
    vector_tiles_enabled: f.vector_tiles_enabled,
    provider_name: optionalText(f.provider_name.trim()),
    provider_site: optionalText(f.provider_site.trim()),
    contact_name: optionalText(f.contact_name.trim()),
    contact_position: optionalText(f.contact_position.trim()),
    contact_email: optionalText(f.contact_email.trim()),
  });

/** Each WMTS text's label, input type and hint. */
const WMTS_TEXT_LABELS: Record<(typeof WMTS_TEXTS)[number], [string, string, string]> = {
  provider_name: ['Provider name', 'text', 'At most 256 characters.'],
  provider_site: ['Provider site', 'url', 'An absolute http(s) URL.'],
  contact_name: ['Contact name', 'text', 'At most 256 characters.'],
  contact_position: ['Contact position', 'text', 'At most 256 characters.'],
  contact_email: ['Contact email', 'email', 'An email address.'],
};

/** The WMTS settings: its capabilities' provider and contact, GetFeatureInfo and vector tiles. */
export function WMTSSettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'wmts', wmtsForm, wmtsDoc);
  return (
    <SettingsSection id="wmts" service="WMTS" state={s} fields={WMTS_FIELDS}>
      {(form, update, err) => (
        <>
          <NotServed service="WMTS" />
          <p class="hint">
            Its tile matrix sets and tile formats would be those of the OGC API Tiles settings (see{' '}
            <a href={paths.tileMatrixSets}>tile matrix sets</a>).
          </p>
          <Check
            label="WMTS GetFeatureInfo"
            checked={form.feature_info_enabled}
            onChange={(feature_info_enabled) => update({ feature_info_enabled })}
            error={err('feature_info_enabled')}
          />
          <Check
            label="WMTS vector tiles"
            checked={form.vector_tiles_enabled}
            onChange={(vector_tiles_enabled) => update({ vector_tiles_enabled })}
            error={err('vector_tiles_enabled')}
          />
          {WMTS_TEXTS.map((field) => {
            const [label, type, hint] = WMTS_TEXT_LABELS[field];
            return (
              <TextInput
                key={field}
                label={label}
                hint={hint}
                type={type}
                maxLength={field === 'provider_site' ? 2048 : 256}
                value={form[field]}
                onInput={(value) => update({ [field]: value } as Partial<WMTSForm>)}
                error={err(field)}
              />
            );
          })}
        </>
      )}
    </SettingsSection>
  );
}
