/**
 * The WFS, WCS and WMTS settings forms of the settings page (ADR 0133), built from the same parts
 * as the WMS form: the same load / If-Match save / refusal-beside-the-field behaviour. GeoPlane does
 * not serve these protocols yet, and each form says so: what is saved is stored and validated, and
 * changes no response until it does.
 */

import type { SETTINGS_CEILINGS } from '#client/settings-limits.ts';
import { allOf } from '#console/api.ts';
import { Field, TextInput } from '#console/components/forms.tsx';
import { paths } from '#console/routes.ts';
import {
  Check,
  Choices,
  choicesOf,
  defined,
  type Limit,
  LimitFields,
  limitNumbers,
  limitTexts,
  optionalText,
} from './fields.tsx';
import {
  type CommonForm,
  commonDoc,
  commonForm,
  type SettingsDocuments,
  SettingsSection,
  useSettingsForm,
} from './settings-form.tsx';

type WFSSettings = SettingsDocuments['wfs'];
type WCSSettings = SettingsDocuments['wcs'];
type WMTSSettings = SettingsDocuments['wmts'];

type WcsExtension = NonNullable<WCSSettings['extensions']>[number];
const WCS_EXTENSIONS = allOf<WcsExtension>({
  'xml-post': true,
  'range-subsetting': true,
  scaling: true,
  crs: true,
  interpolation: true,
  multidimensional: true,
});
type WcsFormat = NonNullable<WCSSettings['output_formats']>[number];
const WCS_FORMATS = allOf<WcsFormat>({
  'image/tiff': true,
  'application/gml+xml': true,
  'multipart/related': true,
  'application/netcdf': true,
  'image/jp2': true,
});
type WcsInterpolation = NonNullable<WCSSettings['interpolation_methods']>[number];
const WCS_INTERPOLATIONS = allOf<WcsInterpolation>({ 'nearest-neighbor': true, linear: true });

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

type WfsLimit = keyof typeof SETTINGS_CEILINGS.wfs;

const WFS_LIMITS: Limit<WfsLimit>[] = [
  {
    field: 'max_features',
    label: 'Max features per GetFeature',
    unit: 'features',
    extra: 'The largest count a client may ask for.',
  },
  {
    field: 'default_count',
    label: 'Default GetFeature count',
    unit: 'features',
    extra: 'When a client names no count; at most the max.',
  },
  { field: 'max_offset', label: 'Max start index', unit: 'features', extra: 'How deep paging may go.' },
  {
    field: 'count_timeout_ms',
    label: 'Count timeout',
    unit: 'milliseconds',
    extra: 'Time spent counting numberMatched.',
  },
];

interface WFSForm extends CommonForm, Record<WfsLimit, string> {}

const WFS_FIELDS = WFS_LIMITS.map((limit) => limit.field);

const wfsForm = (d: WFSSettings): WFSForm => ({ ...commonForm(d), ...limitTexts(d, WFS_LIMITS) });

const wfsDoc = (f: WFSForm): WFSSettings => defined({ ...commonDoc(f), ...limitNumbers(f, WFS_LIMITS) });

/** The WFS settings: GetFeature's limits. */
export function WFSSettingsForm({ workspace }: { workspace: string }) {
  const s = useSettingsForm(workspace, 'wfs', wfsForm, wfsDoc);
  return (
    <SettingsSection id="wfs" service="WFS" state={s} fields={WFS_FIELDS}>
      {(form, update, err) => (
        <>
          <NotServed service="WFS" />
          <LimitFields of="wfs" limits={WFS_LIMITS} values={form} onInput={update} err={err} />
        </>
      )}
    </SettingsSection>
  );
}

// ---- WCS ----

type WcsLimit = keyof typeof SETTINGS_CEILINGS.wcs;

/** Each WCS limit's label, unit and what it bounds. */
const WCS_LIMITS: Limit<WcsLimit>[] = [
  {
    field: 'max_cells',
    label: 'Max cells per coverage',
    unit: 'cells',
    extra: 'Width × height of one response.',
  },
  { field: 'max_output_bytes', label: 'Max response size', unit: 'bytes' },
  { field: 'processing_timeout_ms', label: 'Processing timeout', unit: 'milliseconds' },
  {
    field: 'max_dimensions',
    label: 'Max dimensions',
    unit: 'dimensions',
    extra: 'Beyond the two spatial axes.',
  },
  {
    field: 'max_axis_values',
    label: 'Max values per axis',
    unit: 'values',
    extra: 'Of a time or elevation axis.',
  },
  {
    field: 'max_source_granules',
    label: 'Max source granules',
    unit: 'granules',
    extra: 'Read for one request.',
  },
  {
    field: 'max_temporary_bytes',
    label: 'Max temporary storage',
    unit: 'bytes',
    extra: 'Scratch space for one request.',
  },
];

interface WCSForm extends CommonForm, Record<WcsLimit, string> {
  extensions: WcsExtension[];
  output_formats: WcsFormat[];
  interpolation_methods: WcsInterpolation[];
  /** One CRS per line. */
  allowed_subsetting_crs: string;
  allowed_output_crs: string;
}

const WCS_FIELDS = [
  ...WCS_LIMITS.map((limit) => limit.field),
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
  ...limitTexts(d, WCS_LIMITS),
  extensions: d.extensions ?? [],
  output_formats: d.output_formats ?? [],
  interpolation_methods: d.interpolation_methods ?? [],
  allowed_subsetting_crs: lines(d.allowed_subsetting_crs),
  allowed_output_crs: lines(d.allowed_output_crs),
});

const wcsDoc = (f: WCSForm): WCSSettings =>
  defined({
    ...commonDoc(f),
    ...limitNumbers(f, WCS_LIMITS),
    extensions: some(f.extensions),
    output_formats: some(f.output_formats),
    interpolation_methods: some(f.interpolation_methods),
    allowed_subsetting_crs: listOf(f.allowed_subsetting_crs),
    allowed_output_crs: listOf(f.allowed_output_crs),
  });

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
  return (
    <SettingsSection id="wcs" service="WCS" state={s} fields={WCS_FIELDS}>
      {(form, update, err) => (
        <>
          <NotServed service="WCS" />
          <LimitFields of="wcs" limits={WCS_LIMITS} values={form} onInput={update} err={err} />
          <Choices
            legend="WCS extensions"
            hint="The WCS 2.0 extensions this workspace's WCS would answer."
            options={WCS_EXTENSIONS}
            {...choicesOf('extensions', form, update, err)}
          />
          <Choices
            legend="WCS output formats"
            options={WCS_FORMATS}
            {...choicesOf('output_formats', form, update, err)}
          />
          <Choices
            legend="WCS interpolation methods"
            options={WCS_INTERPOLATIONS}
            {...choicesOf('interpolation_methods', form, update, err)}
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
