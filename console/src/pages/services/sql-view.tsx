/** An SQL view of a PostGIS service: validated by the API, then published as a layer of its own. */
import { useState } from 'preact/hooks';
import { api, call, type Schemas } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, Field, issueFor } from '#console/components/forms.tsx';
import { Table } from '#console/components/lists.tsx';
import { PublishLayer } from './publish-layer.tsx';

type Validation = Schemas['ValidateSQLResponse'];

export function SqlView({ workspace, service }: { workspace: string; service: string }) {
  const [sql, setSql] = useState('');
  const [result, setResult] = useState<{ sql: string; validation: Validation }>();
  const validate = useAction(async (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    const validation = await call(
      api.POST('/api/v1/workspaces/{workspace}/services/{service}/validate-sql', {
        params: { path: { workspace, service } },
        body: { sql },
      }),
    );
    setResult({ sql, validation });
  });
  const v = result?.validation;
  const refused = v && !v.valid ? `Not a valid SQL view: ${v.error ?? 'the API gave no reason.'}` : undefined;
  const sqlIssue = issueFor(validate.error, 'body.sql');
  return (
    <section aria-labelledby="sql-heading">
      <h2 id="sql-heading">SQL view</h2>
      <p>A read-only query over the service's tables, published as a layer of its own.</p>
      <form onSubmit={(event) => void validate.run(event)}>
        <Field
          label="SQL"
          hint="One SELECT statement; the API refuses writes and forbidden functions."
          error={sqlIssue ?? refused}
        >
          {(props) => (
            <textarea
              {...props}
              required
              rows={6}
              spellcheck={false}
              value={sql}
              onInput={(e) => {
                setSql(e.currentTarget.value);
                setResult(undefined);
              }}
            />
          )}
        </Field>
        <button type="submit" disabled={validate.busy}>
          {validate.busy ? 'Validating…' : 'Validate'}
        </button>
        {sqlIssue ? null : <ErrorNote error={validate.error} />}
      </form>
      {v?.valid && v.discovered ? (
        <>
          <p class="notice" role="status">
            Valid: geometry column <code>{v.discovered.geometry_column}</code> ({v.discovered.geometry_type},
            SRID {v.discovered.srid}), suggested id column{' '}
            <code>{v.discovered.suggested_id_column || '—'}</code>.
          </p>
          <Table columns={['Column', 'Type']} caption="Columns of the SQL view">
            {v.discovered.columns.map((column) => (
              <tr key={column.name}>
                <td>
                  <code>{column.name}</code>
                </td>
                <td>{column.type}</td>
              </tr>
            ))}
          </Table>
          <PublishLayer
            key={result?.sql}
            workspace={workspace}
            service={service}
            sqlView={{
              sql: result?.sql ?? sql,
              geometry_column: v.discovered.geometry_column,
              ...(v.discovered.suggested_id_column ? { id_column: v.discovered.suggested_id_column } : {}),
              srid: v.discovered.srid,
            }}
            defaults={{ public_id: '', title: '' }}
            heading="Publish as layer"
          />
        </>
      ) : null}
    </section>
  );
}
