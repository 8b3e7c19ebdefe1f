/**
 * Tile matrix sets (global): the list (built-ins first), one set with `?set=<id>` — its tile
 * matrices in a table —, creating or replacing a custom set from its OGC 2D-TMS 2.0 JSON, and
 * deleting one. Anyone signed in reads them; creating, replacing and deleting needs super_admin.
 */
import './tile-matrix-sets.css';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ConsoleApiError, call, etag, type Schemas } from '#console/api.ts';
import { Loaded, useAction, useLoad } from '#console/components/data.tsx';
import { Confirm, DeleteSection, useConfirmed } from '#console/components/dialogs.tsx';
import { ErrorNote, Field, Notice } from '#console/components/forms.tsx';
import { PagedSection, Table, usePagedList } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { useSession } from '#console/session.ts';

type TileMatrixSetRecord = Schemas['TileMatrixSetRecord'];
type TileMatrixSetDefinition = Schemas['TileMatrixSetDefinition'];

const setUrl = (id: string) => `${paths.tileMatrixSets}?set=${encodeURIComponent(id)}`;
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The definition typed in the editor, or an error saying what is wrong with the text. */
function parseDefinition(text: string): TileMatrixSetDefinition {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`The document is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new Error('The document must be a JSON object (an OGC 2D-TMS 2.0 tile matrix set).');
  const id = (value as { id?: unknown }).id;
  if (typeof id !== 'string' || !ID.test(id))
    throw new Error(
      'The document needs an "id": 1–64 characters, a letter or digit, then letters, digits, ".", "_" or "-"; it names the set.',
    );
  return value as TileMatrixSetDefinition;
}

/** Errors about the document (the API's 400/413/422 or the console's own parse error) stay beside the editor. */
function isDocumentError(error: unknown): boolean {
  if (!(error instanceof ConsoleApiError)) return error !== undefined;
  return error.status === 400 || error.status === 413 || error.status === 422;
}

const crsText = (crs: TileMatrixSetDefinition['crs']) => (typeof crs === 'string' ? crs : crs.uri);

/** The JSON editor of a definition with its submit button (create, or replace with If-Match). */
function DefinitionForm({
  initial,
  submitLabel,
  hint,
  onSubmit,
}: {
  initial: string;
  submitLabel: string;
  hint: string;
  onSubmit: (definition: TileMatrixSetDefinition) => Promise<void>;
}) {
  const [text, setText] = useState(initial);
  const save = useAction(async (event: Event) => {
    event.preventDefault();
    await onSubmit(parseDefinition(text));
  });
  const documentError = isDocumentError(save.error) ? save.error : undefined;
  return (
    <form onSubmit={(event) => void save.run(event)}>
      <Field label="Tile matrix set (JSON)" hint={hint} error={documentError}>
        {(props) => (
          <textarea
            {...props}
            class="tms-editor"
            required
            spellcheck={false}
            rows={16}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit" class="primary" disabled={save.busy}>
        {submitLabel}
      </button>
      {documentError ? null : <ErrorNote error={save.error} />}
    </form>
  );
}

function SetList() {
  const list = usePagedList(
    (page) => call(api.GET('/api/v1/tile-matrix-sets', { params: { query: { limit: 50, ...page } } })),
    [],
  );
  return (
    <PagedSection
      id="list-heading"
      heading="Tile matrix sets"
      list={list}
      items={(data) => data.tile_matrix_sets}
      columns={['Id', 'Title', 'CRS', 'Kind']}
      empty={<p>No tile matrix sets.</p>}
    >
      {(set) => (
        <tr key={set.id}>
          <td>
            <a href={setUrl(set.id)}>{set.id}</a>
          </td>
          <td>{set.title ?? ''}</td>
          <td>
            <code>{set.crs}</code>
          </td>
          <td>{set.built_in ? 'built-in' : 'custom'}</td>
        </tr>
      )}
    </PagedSection>
  );
}

function CreateSet({ superAdmin }: { superAdmin: boolean }) {
  const { route } = useLocation();
  return (
    <section aria-labelledby="create-heading">
      <h2 id="create-heading">Create or replace a custom set</h2>
      <p>
        Paste an OGC Two Dimensional Tile Matrix Set 2.0 document; its <code>id</code> names the set, and an
        existing custom set with that id is replaced.
        {superAdmin ? null : ' This needs the super_admin role.'}
      </p>
      <DefinitionForm
        initial=""
        submitLabel="Save tile matrix set"
        hint="JSON with id, crs (an OGC or EPSG CRS URI) and 1–64 tileMatrices; at most 256 KiB."
        onSubmit={async (definition) => {
          const record = await call(
            api.PUT('/api/v1/tile-matrix-sets/{tileMatrixSet}', {
              params: { path: { tileMatrixSet: definition.id } },
              body: definition,
            }),
          );
          route(setUrl(record.id));
        }}
      />
    </section>
  );
}

function Matrices({ set }: { set: TileMatrixSetRecord }) {
  const matrices = set.definition.tileMatrices;
  return (
    <section aria-labelledby="matrices-heading">
      <h2 id="matrices-heading">Tile matrices ({matrices.length})</h2>
      <div class="table-scroll">
        <Table
          columns={[
            'Id',
            'Scale denominator',
            'Cell size',
            'Corner of origin',
            'Point of origin',
            'Tile size (px)',
            'Matrix size (tiles)',
          ]}
        >
          {matrices.map((m) => (
            <tr key={m.id}>
              <td>{m.id}</td>
              <td class="num">{m.scaleDenominator}</td>
              <td class="num">{m.cellSize}</td>
              <td>{m.cornerOfOrigin ?? 'topLeft'}</td>
              <td>
                <code>{m.pointOfOrigin.join(', ')}</code>
              </td>
              <td class="num">
                {m.tileWidth} × {m.tileHeight}
              </td>
              <td class="num">
                {m.matrixWidth} × {m.matrixHeight}
              </td>
            </tr>
          ))}
        </Table>
      </div>
    </section>
  );
}

function OneSet({ id, superAdmin }: { id: string; superAdmin: boolean }) {
  const { route } = useLocation();
  const set = useLoad(
    () =>
      call(api.GET('/api/v1/tile-matrix-sets/{tileMatrixSet}', { params: { path: { tileMatrixSet: id } } })),
    [id],
  );
  const [saved, setSaved] = useState<string>();
  const remove = useConfirmed(async (record: TileMatrixSetRecord) => {
    await call(
      api.DELETE('/api/v1/tile-matrix-sets/{tileMatrixSet}', {
        params: { path: { tileMatrixSet: id }, header: { 'If-Match': etag(record.revision) } },
      }),
    );
    route(paths.tileMatrixSets);
  });
  return (
    <>
      <PageTitle title={`Tile matrix set ${id}`}>Tile matrix set {id}</PageTitle>
      <p>
        <a href={paths.tileMatrixSets}>All tile matrix sets</a>
      </p>
      <Loaded state={set}>
        {(record) => (
          <>
            <dl class="facts">
              <dt>Title</dt>
              <dd>{record.definition.title ?? '—'}</dd>
              <dt>CRS</dt>
              <dd>
                <code>{crsText(record.definition.crs)}</code>
              </dd>
              {record.definition.uri ? (
                <>
                  <dt>URI</dt>
                  <dd>
                    <code>{record.definition.uri}</code>
                  </dd>
                </>
              ) : null}
              {record.definition.orderedAxes ? (
                <>
                  <dt>Axes</dt>
                  <dd>{record.definition.orderedAxes.join(', ')}</dd>
                </>
              ) : null}
              <dt>Kind</dt>
              <dd>{record.built_in ? 'built-in (immutable)' : 'custom'}</dd>
              <dt>Revision</dt>
              <dd>{record.revision}</dd>
              <dt>Digest</dt>
              <dd>
                <code class="digest">{record.digest}</code>
              </dd>
              {record.updated_at ? (
                <>
                  <dt>Updated</dt>
                  <dd>
                    <When at={record.updated_at} />
                  </dd>
                </>
              ) : null}
            </dl>
            {record.definition.description ? <p>{record.definition.description}</p> : null}
            <Matrices set={record} />
            {record.built_in ? (
              <p>Built-in sets can't be replaced or deleted.</p>
            ) : (
              <>
                <section aria-labelledby="replace-heading">
                  <h2 id="replace-heading">Replace</h2>
                  {superAdmin ? null : <p>Replacing a set needs the super_admin role.</p>}
                  <DefinitionForm
                    key={record.revision}
                    initial={JSON.stringify(record.definition, null, 2)}
                    submitLabel="Replace tile matrix set"
                    hint={`The whole definition; its id stays ${record.id}. Saved only over revision ${record.revision}.`}
                    onSubmit={async (definition) => {
                      const updated = await call(
                        api.PUT('/api/v1/tile-matrix-sets/{tileMatrixSet}', {
                          params: {
                            path: { tileMatrixSet: id },
                            header: { 'If-Match': etag(record.revision) },
                          },
                          body: definition,
                        }),
                      );
                      setSaved(`Saved (revision ${updated.revision}).`);
                      await set.reload();
                    }}
                  />
                  <Notice>{saved}</Notice>
                </section>
                <DeleteSection
                  label="Delete tile matrix set…"
                  busy={remove.busy}
                  error={remove.error}
                  onDelete={() => remove.ask(record)}
                >
                  <p>
                    A set that workspaces' OGC API Tiles settings name can't be deleted; the API names them.
                  </p>
                </DeleteSection>
                <Confirm
                  {...remove.dialog}
                  title={`Delete tile matrix set ${record.id}?`}
                  confirmLabel="Delete"
                  danger
                />
              </>
            )}
          </>
        )}
      </Loaded>
    </>
  );
}

export function TileMatrixSetsPage() {
  const me = useSession();
  const { query } = useLocation();
  const superAdmin = me?.super_admin === true;
  if (query.set) return <OneSet key={query.set} id={query.set} superAdmin={superAdmin} />;
  return (
    <>
      <PageTitle title="Tile matrix sets">Tile matrix sets</PageTitle>
      <SetList />
      <CreateSet superAdmin={superAdmin} />
    </>
  );
}
