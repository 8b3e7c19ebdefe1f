/**
 * One settings document's form: read with its ETag (its version, "0" while the defaults apply),
 * replaced whole with If-Match, the fields every service has, the save row, and the API's refusal
 * shown beside the field it names.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ConsoleApiError, call, type Schemas } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { ErrorNote, Field, issueFor, Notice, TextInput } from '#console/components/forms.tsx';
import { Check, optionalText } from './fields.tsx';

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
  wms: Schemas['WMSSettings'];
  ogcapi: Schemas['OGCAPISettings'];
  'ogc-tiles': Schemas['OGCTilesSettings'];
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
        api.PUT(path, {
          params: { ...params, header: { 'If-Match': etag } },
          body: body as Schemas['WMSSettings'],
        }),
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
