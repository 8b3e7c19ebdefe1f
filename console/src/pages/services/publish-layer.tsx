/** Publishing a layer of a service: a discovered table (source_layer) or a validated SQL view. */
import { useId, useState } from 'preact/hooks';
import type { operations } from '#client/api-types.ts';
import { api, call, type Schemas } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, Field, issueFor, SubmitActions, TextInput } from '#console/components/forms.tsx';
import { paths } from '#console/routes.ts';

type LayerInput = operations['createLayer']['requestBody']['content']['application/json'];

/** Publishes a layer: a discovered table (source_layer) or a validated SQL view. */
export function PublishLayer({
  workspace,
  service,
  source,
  sqlView,
  defaults,
  onCancel,
  heading,
}: {
  workspace: string;
  service: string;
  source?: string;
  sqlView?: { sql: string; geometry_column: string; id_column?: string; srid?: number };
  defaults: { public_id: string; title: string };
  onCancel?: () => void;
  heading: string;
}) {
  const [publicId, setPublicId] = useState(defaults.public_id);
  const [title, setTitle] = useState(defaults.title);
  const [geometryColumn, setGeometryColumn] = useState(sqlView?.geometry_column ?? '');
  const [idColumn, setIdColumn] = useState(sqlView?.id_column ?? '');
  const [srid, setSrid] = useState(sqlView?.srid ? String(sqlView.srid) : '');
  const [enabled, setEnabled] = useState(true);
  const [published, setPublished] = useState<Schemas['Layer']>();
  const enabledId = useId();
  const publish = useAction(async (event: Event) => {
    event.preventDefault();
    setPublished(undefined);
    const body: LayerInput = {
      ...(publicId.trim() ? { public_id: publicId.trim() } : {}),
      ...(title.trim() ? { title: title.trim() } : {}),
      enabled,
      ...(sqlView
        ? {
            sql_view: {
              sql: sqlView.sql,
              geometry_column: geometryColumn.trim(),
              ...(idColumn.trim() ? { id_column: idColumn.trim() } : {}),
              ...(srid.trim() ? { srid: Number(srid.trim()) } : {}),
            },
          }
        : { source_layer: source }),
    };
    setPublished(
      await call(
        api.POST('/api/v1/workspaces/{workspace}/services/{service}/layers', {
          params: { path: { workspace, service } },
          body,
        }),
      ),
    );
  });
  const id = sqlView ? 'sql' : 'table';
  return (
    <form
      class="publish"
      aria-labelledby={`publish-${id}-heading`}
      onSubmit={(event) => void publish.run(event)}
    >
      <h3 id={`publish-${id}-heading`}>{heading}</h3>
      <TextInput
        label="Public id"
        hint="Unique in the workspace: the layer's name in OGC API, WMS and tiles."
        error={issueFor(publish.error, 'body.public_id')}
        required={sqlView !== undefined}
        value={publicId}
        onInput={setPublicId}
      />
      <Field label="Title" error={issueFor(publish.error, 'body.title')}>
        {(props) => <input {...props} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />}
      </Field>
      {sqlView ? (
        <>
          <TextInput
            label="Geometry column"
            error={issueFor(publish.error, 'body.sql_view.geometry_column')}
            required
            value={geometryColumn}
            onInput={setGeometryColumn}
          />
          <TextInput
            label="Id column"
            hint="Optional."
            error={issueFor(publish.error, 'body.sql_view.id_column')}
            value={idColumn}
            onInput={setIdColumn}
          />
          <TextInput
            label="SRID"
            hint="Optional."
            error={issueFor(publish.error, 'body.sql_view.srid')}
            inputMode="numeric"
            value={srid}
            onInput={setSrid}
          />
        </>
      ) : (
        <p>
          Source table: <code>{source}</code>
        </p>
      )}
      <div class="check">
        <input
          id={enabledId}
          type="checkbox"
          checked={enabled}
          onChange={(e) => setEnabled(e.currentTarget.checked)}
        />
        <label for={enabledId}>Enabled (unchecked saves a draft without touching the source)</label>
      </div>
      <SubmitActions label="Publish layer" busy={publish.busy} onCancel={onCancel} />
      <ErrorNote error={publish.error} />
      {published ? (
        <p class="notice" role="status">
          Published <a href={paths.layer(workspace, service, published.id)}>{published.public_id}</a>
          {published.enabled ? '' : ' as a draft (disabled)'}.
        </p>
      ) : null}
    </form>
  );
}
