/**
 * Styles of a workspace: the paged list, creating one (SLD 1.0/1.1, SE 1.1 or MapLibre JSON, typed
 * or loaded from a file), and — with `?style=<name>` — one style to edit (If-Match) or delete.
 * The API validates every body; its refusal (the MapLibre validator's messages, an XML parse
 * error) is shown beside the editor.
 */
import './styles.css';
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, ConsoleApiError, call, etag, type Schemas } from '../api.ts';
import { useAction, useLoad } from '../components/data.tsx';
import { Confirm, DeleteSection, useConfirmed } from '../components/dialogs.tsx';
import { ErrorNote, Field, issueFor, Notice, SelectInput, TextInput } from '../components/forms.tsx';
import { PagedTable, usePagedList } from '../components/lists.tsx';
import { PageTitle, When } from '../components/page-parts.tsx';
import { formatBytes, nameFromFile } from '../format.ts';
import { paths } from '../routes.ts';

type Style = Schemas['Style'];
type StyleFormat = Style['format'];

/** Every style format, in the order of the form's choices, with its label. */
const FORMAT_LABELS: Record<StyleFormat, string> = {
  mapbox: 'MapLibre / Mapbox style (JSON)',
  'sld_1.0.0': 'SLD 1.0.0 (XML)',
  'sld_1.1.0': 'SLD 1.1.0 (XML)',
  'se_1.1.0': 'Symbology Encoding 1.1.0 (XML)',
};
const FORMATS = (Object.keys(FORMAT_LABELS) as StyleFormat[]).map((value) => ({
  value,
  label: FORMAT_LABELS[value],
}));

const formatLabel = (format: StyleFormat) => FORMATS.find((f) => f.value === format)?.label ?? format;

/** Largest style body the API takes (MAX_STYLE_BODY_BYTES): 256 KiB. */
const MAX_BODY_BYTES = 256 * 1024;

/** What the style document's text most likely is. */
function guessFormat(text: string): StyleFormat | undefined {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) return 'mapbox';
  if (!trimmed.startsWith('<')) return undefined;
  const root = /<(?:[A-Za-z_][\w.-]*:)?(StyledLayerDescriptor|FeatureTypeStyle|CoverageStyle)\b([^>]*)>/.exec(
    trimmed,
  );
  if (!root) return undefined;
  if (root[1] !== 'StyledLayerDescriptor') return 'se_1.1.0';
  return /\bversion\s*=\s*["']1\.1\.0["']/.test(root[2] ?? '') ? 'sld_1.1.0' : 'sld_1.0.0';
}

/** The body as the editor shows it: XML as is, a MapLibre style as indented JSON. */
function bodyText(body: Style['body']): string {
  return typeof body === 'string' ? body : JSON.stringify(body, null, 2);
}

/** Errors that concern the style document itself, shown beside the editor. */
function isBodyError(error: unknown): boolean {
  if (!(error instanceof ConsoleApiError)) return false;
  if (error.status === 413) return true;
  if (error.status !== 400) return false;
  if (error.body?.issues?.some((issue) => issue.path === 'body' || issue.path.startsWith('body.body')))
    return true;
  return /^(invalid_style|invalid_asset_reference|json_too_deep|style_too_large|malformed_xml|xml_|asset_)/.test(
    error.reason ?? '',
  );
}

interface Draft {
  name: string;
  format: StyleFormat;
  title: string;
  description: string;
  body: string;
}

/** The fields of a style (create and edit share them). */
function StyleFields({
  draft,
  setDraft,
  error,
}: {
  draft: Draft;
  setDraft: (update: Partial<Draft>) => void;
  error: unknown;
}) {
  const [fileError, setFileError] = useState<unknown>();
  const loadFile = async (input: HTMLInputElement) => {
    setFileError(undefined);
    const file = input.files?.[0];
    if (!file) return;
    if (file.size > MAX_BODY_BYTES) {
      setFileError(
        new Error(
          `${file.name} is ${formatBytes(file.size)}; a style body may have at most ${formatBytes(MAX_BODY_BYTES)}.`,
        ),
      );
      return;
    }
    const text = await file.text();
    const format = guessFormat(text);
    setDraft({
      body: text,
      ...(format ? { format } : {}),
      ...(draft.name === '' ? { name: nameFromFile(file.name) } : {}),
    });
  };
  return (
    <>
      <TextInput
        label="Name"
        hint="1–64 letters, digits, '.', '_' and '-'; a different name renames the style."
        error={issueFor(error, 'body.name')}
        required
        maxLength={64}
        value={draft.name}
        onInput={(text) => setDraft({ name: text })}
      />
      <SelectInput
        label="Format"
        error={issueFor(error, 'body.format')}
        value={draft.format}
        options={FORMATS}
        onChange={(format) => setDraft({ format })}
      />
      <TextInput
        label="Title"
        hint="At most 256 characters."
        error={issueFor(error, 'body.title')}
        maxLength={256}
        value={draft.title}
        onInput={(text) => setDraft({ title: text })}
      />
      <TextInput
        label="Description"
        hint="At most 4096 characters."
        error={issueFor(error, 'body.description')}
        maxLength={4096}
        value={draft.description}
        onInput={(text) => setDraft({ description: text })}
      />
      <Field
        label="Style file"
        hint="A .json MapLibre style or an .sld/.xml document; it fills the editor below (and the format, when it can tell)."
        error={fileError}
      >
        {(props) => (
          <input
            {...props}
            type="file"
            accept=".json,.sld,.se,.xml,application/json,application/xml,text/xml"
            onChange={(e) => void loadFile(e.currentTarget)}
          />
        )}
      </Field>
      <Field
        label="Style document"
        hint="MapLibre JSON or SLD/SE XML, at most 256 KiB. Images are referenced as asset:<name> (a style asset of this workspace)."
        error={isBodyError(error) ? error : issueFor(error, 'body.body')}
      >
        {(props) => (
          <textarea
            {...props}
            class="style-editor"
            required
            spellcheck={false}
            rows={18}
            value={draft.body}
            onInput={(e) => setDraft({ body: e.currentTarget.value })}
          />
        )}
      </Field>
    </>
  );
}

/** The request body of a draft: JSON text goes as text; the API parses and validates it. */
function inputOf(draft: Draft) {
  return {
    name: draft.name.trim(),
    format: draft.format,
    body: draft.body,
    ...(draft.title.trim() ? { title: draft.title.trim() } : {}),
    ...(draft.description.trim() ? { description: draft.description.trim() } : {}),
  };
}

const emptyDraft: Draft = { name: '', format: 'mapbox', title: '', description: '', body: '' };

function CreateStyle({ workspace }: { workspace: string }) {
  const { route } = useLocation();
  const [draft, setDraftState] = useState<Draft>(emptyDraft);
  const setDraft = (update: Partial<Draft>) => setDraftState((d) => ({ ...d, ...update }));
  const create = useAction(async (event: Event) => {
    event.preventDefault();
    const created = await call(
      api.POST('/api/v1/workspaces/{workspace}/styles', {
        params: { path: { workspace } },
        body: inputOf(draft),
      }),
    );
    route(`${paths.styles(workspace)}?style=${encodeURIComponent(created.name)}`);
  });
  return (
    <section aria-labelledby="create-heading">
      <h2 id="create-heading">Create a style</h2>
      <form onSubmit={(event) => void create.run(event)}>
        <StyleFields draft={draft} setDraft={setDraft} error={create.error} />
        <button type="submit" class="primary" disabled={create.busy}>
          Create style
        </button>
        {isBodyError(create.error) ? null : <ErrorNote error={create.error} />}
      </form>
    </section>
  );
}

function StyleList({ workspace }: { workspace: string }) {
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/styles', {
          params: { path: { workspace }, query: { limit: 50, ...page } },
        }),
      ),
    [workspace],
  );
  return (
    <section aria-labelledby="list-heading">
      <h2 id="list-heading">Styles</h2>
      <PagedTable
        state={list}
        pager={list.pager}
        items={(data) => data.styles}
        columns={['Name', 'Format', 'Title', 'Assets used', 'Version', 'Updated']}
        empty={<p>No styles yet.</p>}
      >
        {(s) => (
          <tr key={s.id}>
            <td>
              <a href={`${paths.styles(workspace)}?style=${encodeURIComponent(s.name)}`}>{s.name}</a>
            </td>
            <td>{formatLabel(s.format)}</td>
            <td>{s.title ?? ''}</td>
            <td>{s.asset_refs.length ? s.asset_refs.join(', ') : '—'}</td>
            <td>{s.version}</td>
            <td>
              <When at={s.updated_at} />
            </td>
          </tr>
        )}
      </PagedTable>
    </section>
  );
}

function draftOf(style: Style): Draft {
  return {
    name: style.name,
    format: style.format,
    title: style.title ?? '',
    description: style.description ?? '',
    body: bodyText(style.body),
  };
}

function OneStyle({ workspace, name }: { workspace: string; name: string }) {
  const { route } = useLocation();
  const style = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/styles/{style}', {
          params: { path: { workspace, style: name } },
        }),
      ),
    [workspace, name],
  );
  const [edits, setEdits] = useState<Partial<Draft>>({});
  const [saved, setSaved] = useState<string>();
  const current = style.data;
  const draft: Draft | undefined = current ? { ...draftOf(current), ...edits } : undefined;

  const save = useAction(async (event: Event) => {
    event.preventDefault();
    if (!current || !draft) return;
    setSaved(undefined);
    const updated = await call(
      api.PUT('/api/v1/workspaces/{workspace}/styles/{style}', {
        params: {
          path: { workspace, style: current.name },
          header: { 'If-Match': etag(current.version) },
        },
        body: inputOf(draft),
      }),
    );
    setEdits({});
    setSaved(`Saved (version ${updated.version}).`);
    if (updated.name !== current.name)
      route(`${paths.styles(workspace)}?style=${encodeURIComponent(updated.name)}`, true);
    else await style.reload();
  });

  const remove = useConfirmed(async (style: Style) => {
    await call(
      api.DELETE('/api/v1/workspaces/{workspace}/styles/{style}', {
        params: {
          path: { workspace, style: style.name },
          header: { 'If-Match': etag(style.version) },
        },
      }),
    );
    route(paths.styles(workspace));
  });

  return (
    <>
      <PageTitle title={`Style ${name} · ${workspace}`}>Style {name}</PageTitle>
      <p>
        <a href={paths.styles(workspace)}>All styles of {workspace}</a>
      </p>
      <ErrorNote error={style.error} />
      {current && draft ? (
        <>
          <dl class="facts">
            <dt>Format</dt>
            <dd>{formatLabel(current.format)}</dd>
            <dt>Version</dt>
            <dd>{current.version}</dd>
            <dt>Assets used</dt>
            <dd>
              {current.asset_refs.length ? (
                current.asset_refs.map((asset, i) => (
                  <span key={asset}>
                    {i ? ', ' : ''}
                    <code>{asset}</code>
                  </span>
                ))
              ) : (
                <span>none</span>
              )}{' '}
              (<a href={paths.styleAssets(workspace)}>style assets</a>)
            </dd>
            <dt>Created</dt>
            <dd>
              <When at={current.created_at} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <When at={current.updated_at} />
            </dd>
          </dl>
          <section aria-labelledby="edit-heading">
            <h2 id="edit-heading">Edit</h2>
            <form onSubmit={(event) => void save.run(event)}>
              <StyleFields
                draft={draft}
                setDraft={(update) => setEdits((e) => ({ ...e, ...update }))}
                error={save.error}
              />
              <div class="actions">
                <button type="submit" class="primary" disabled={save.busy}>
                  Save style
                </button>
                <button
                  type="button"
                  disabled={Object.keys(edits).length === 0}
                  onClick={() => {
                    setEdits({});
                    save.setError(undefined);
                  }}
                >
                  Discard changes
                </button>
              </div>
              {isBodyError(save.error) ? null : <ErrorNote error={save.error} />}
              {save.error instanceof ConsoleApiError && save.error.status === 412 ? (
                <p>
                  Someone saved this style meanwhile.{' '}
                  <button type="button" onClick={() => void style.reload()}>
                    Load their version
                  </button>{' '}
                  (your edits stay in the form).
                </p>
              ) : null}
              <Notice>{saved}</Notice>
            </form>
          </section>
          <DeleteSection
            label="Delete style…"
            busy={remove.busy}
            error={remove.error}
            onDelete={() => remove.ask(current)}
          >
            <p>A style that layers use can't be deleted; the API names them.</p>
          </DeleteSection>
          <Confirm {...remove.dialog} title={`Delete style ${current.name}?`} confirmLabel="Delete" danger>
            <p>Its asset references go with it; the assets themselves stay.</p>
          </Confirm>
        </>
      ) : style.loading ? (
        <p>Loading…</p>
      ) : null}
    </>
  );
}

export function StylesPage() {
  const { params } = useRoute();
  const { query } = useLocation();
  const workspace = params.workspace as string;
  const selected = query.style;
  if (selected) return <OneStyle key={`${workspace}/${selected}`} workspace={workspace} name={selected} />;
  return (
    <>
      <PageTitle title={`Styles · ${workspace}`}>Styles of {workspace}</PageTitle>
      <StyleList workspace={workspace} />
      <CreateStyle workspace={workspace} />
    </>
  );
}
