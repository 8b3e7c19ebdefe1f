/** The WMS settings form: its default style, image and rendering limits, simplification, extensions. */
import { useId } from 'preact/hooks';
import type { SETTINGS_CEILINGS } from '#client/settings-limits.ts';
import { allOf, api, call, type Schemas } from '#console/api.ts';
import { useLoad } from '#console/components/data.tsx';
import { Field, Suggestions, TextInput } from '#console/components/forms.tsx';
import { paths } from '#console/routes.ts';
import {
  Choices,
  choicesOf,
  defined,
  type Limit,
  LimitFields,
  limitNumbers,
  limitTexts,
  NumberField,
  numberOf,
  optionalText,
  textOf,
} from './fields.tsx';
import {
  type CommonForm,
  commonDoc,
  commonForm,
  SettingsSection,
  useSettingsForm,
} from './settings-form.tsx';

type WMSSettings = Schemas['WMSSettings'];

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

type WmsLimit = keyof typeof SETTINGS_CEILINGS.wms;

/** The WMS limits, in the order of the form. */
const WMS_LIMITS: Limit<WmsLimit>[] = [
  { field: 'max_width', label: 'Max image width', unit: 'pixels' },
  { field: 'max_height', label: 'Max image height', unit: 'pixels' },
  { field: 'max_pixels', label: 'Max pixels per image', unit: 'pixels', extra: 'Width × height.' },
  { field: 'max_render_features', label: 'Max features rendered', unit: 'features', extra: 'Per request.' },
  { field: 'max_render_vertices', label: 'Max vertices rendered', unit: 'vertices', extra: 'Per request.' },
];

interface WMSForm extends CommonForm, Record<WmsLimit, string> {
  default_style: string;
  simplify_enabled: '' | 'on' | 'off';
  simplify_pixel_tolerance: string;
  extensions: NonNullable<WMSSettings['extensions']>;
}

const WMS_FIELDS = [
  'default_style',
  ...WMS_LIMITS.map((limit) => limit.field),
  'simplify_enabled',
  'simplify_pixel_tolerance',
  'extensions',
];

const wmsForm = (d: WMSSettings): WMSForm => ({
  ...commonForm(d),
  default_style: d.default_style ?? '',
  ...limitTexts(d, WMS_LIMITS),
  simplify_enabled: d.simplify_enabled === undefined ? '' : d.simplify_enabled ? 'on' : 'off',
  simplify_pixel_tolerance: textOf(d.simplify_pixel_tolerance),
  extensions: d.extensions ?? [],
});

const wmsDoc = (f: WMSForm): WMSSettings =>
  defined({
    ...commonDoc(f),
    default_style: optionalText(f.default_style.trim()),
    ...limitNumbers(f, WMS_LIMITS),
    simplify_enabled: f.simplify_enabled === '' ? undefined : f.simplify_enabled === 'on',
    simplify_pixel_tolerance: numberOf(f.simplify_pixel_tolerance),
    extensions: f.extensions.length ? f.extensions : undefined,
  });

export function WMSSettingsForm({ workspace }: { workspace: string }) {
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
          <Suggestions id={listId} values={(styles.data?.styles ?? []).map((style) => style.name)} />
          <LimitFields of="wms" limits={WMS_LIMITS} values={form} onInput={update} err={err} />
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
            options={WMS_EXTENSIONS}
            {...choicesOf('extensions', form, update, err)}
          />
        </>
      )}
    </SettingsSection>
  );
}
