/** What discovery found in an import's file, and a preview of the features staged from it. */
import { useState } from 'preact/hooks';
import { api, ConsoleApiError, call } from '#console/api.ts';
import { useLoad } from '#console/components/data.tsx';
import { ErrorNote, Field } from '#console/components/forms.tsx';
import { Table } from '#console/components/lists.tsx';
import { formatCount as count, formatBytes, statusText } from '#console/format.ts';
import { FeaturesMap } from '../map-preview/features-map.tsx';
import { type ImportJob, reading, STAGED } from './import-status.ts';

/** What the file's reading or the load warned about, when anything. */
export function Warnings({ warnings }: { warnings?: string[] }) {
  if (!warnings?.length) return null;
  return (
    <div class="warnings">
      <p>Warnings:</p>
      <ul>
        {warnings.map((w) => (
          <li key={w}>{w}</li>
        ))}
      </ul>
    </div>
  );
}

export function Discovery({ job }: { job: ImportJob }) {
  const discovery = job.discovery;
  if (!discovery) return <p>The file has not been read yet.</p>;
  return (
    <>
      <p>
        Format <strong>{discovery.format}</strong>, {formatBytes(discovery.size_bytes)}.
      </p>
      <Table columns={['Layer', 'Geometry', 'SRID', 'Features', 'Fields']}>
        {discovery.layers.map((layer) => (
          <tr key={layer.name}>
            <td>{layer.name}</td>
            <td>{layer.geometry_type ?? 'none'}</td>
            <td>{layer.srid ?? 'unknown'}</td>
            <td>{count(layer.feature_count)}</td>
            <td>{layer.fields.map((f) => `${f.name} (${f.type})`).join(', ')}</td>
          </tr>
        ))}
      </Table>
      <Warnings warnings={discovery.warnings} />
    </>
  );
}

type PreviewFeature = {
  id?: string | number;
  geometry?: { type?: string } | null;
  properties?: Record<string, unknown> | null;
};

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A 409 `nothing_staged` while the load runs: its first features are on their way, not an error. */
function notStagedYet(job: ImportJob, error: unknown): boolean {
  return (
    job.status === 'running' &&
    error instanceof ConsoleApiError &&
    error.status === 409 &&
    error.reason === 'nothing_staged'
  );
}

export function Preview({ workspace, job }: { workspace: string; job: ImportJob }) {
  const layers = job.plan?.layers ?? [];
  const [chosen, setLayer] = useState(layers[0]?.public_id ?? '');
  const layer = layers.some((l) => l.public_id === chosen) ? chosen : (layers[0]?.public_id ?? '');
  // While the workflow still reads the file nothing can be staged: no request, no 409 to show.
  const staged = STAGED.includes(job.status) && !reading(job);
  const preview = useLoad(
    async () =>
      staged
        ? call(
            api.GET('/api/v1/workspaces/{workspace}/imports/{import}/preview', {
              params: {
                path: { workspace, import: job.id },
                query: { limit: 10, ...(layer ? { layer } : {}) },
              },
            }),
          )
        : undefined,
    [workspace, job.id, layer, job.version, staged],
  );
  const features = (preview.data?.features ?? []) as PreviewFeature[];
  const keys = [...new Set(features.flatMap((f) => Object.keys(f.properties ?? {})))].slice(0, 12);
  return (
    <>
      {layers.length > 1 ? (
        <Field label="Layer to preview">
          {(props) => (
            <select {...props} value={layer} onChange={(e) => setLayer(e.currentTarget.value)}>
              {layers.map((l) => (
                <option key={l.public_id} value={l.public_id}>
                  {l.public_id}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      {reading(job) ? (
        <p class="pending" role="status">
          Still reading the file… the preview follows once its features are staged.
        </p>
      ) : !staged ? (
        <p>Nothing is staged while the import is {statusText(job.status)}.</p>
      ) : notStagedYet(job, preview.error) ? (
        <p class="pending" role="status">
          Still loading… no features of this layer are staged yet.
        </p>
      ) : (
        <ErrorNote error={preview.error} />
      )}
      {staged && preview.data ? (
        features.length === 0 ? (
          <p>No features staged yet.</p>
        ) : (
          <>
            {features.some((feature) => feature.geometry) ? (
              <FeaturesMap
                features={features}
                label={`The first ${features.length} staged feature${features.length === 1 ? '' : 's'} of ${layer || layers[0]?.public_id} on the map`}
              />
            ) : null}
            <div class="preview-table">
              <table>
                <caption>
                  The first {features.length} feature{features.length === 1 ? '' : 's'} of{' '}
                  {layer || layers[0]?.public_id} (EPSG:4326)
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Id</th>
                    <th scope="col">Geometry</th>
                    {keys.map((key) => (
                      <th scope="col" key={key}>
                        {key}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {features.map((feature, i) => (
                    <tr key={String(feature.id ?? i)}>
                      <td>{cell(feature.id ?? i + 1)}</td>
                      <td>{feature.geometry?.type ?? 'none'}</td>
                      {keys.map((key) => (
                        <td key={key}>{cell(feature.properties?.[key])}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )
      ) : null}
    </>
  );
}
