/** A workspace's counts on its overview (getWorkspaceSummary, ADR 0137), for its admins. */
import { api, call, GeoPlaneApiError } from '#console/api.ts';
import { useLoad } from '#console/components/data.tsx';
import { ErrorNote } from '#console/components/forms.tsx';
import { formatCount, plural, statusText } from '#console/format.ts';

export function WorkspaceSummary({ workspace }: { workspace: string }) {
  const summary = useLoad(
    () => call(api.GET('/api/v1/workspaces/{workspace}/summary', { params: { path: { workspace } } })),
    [workspace],
  );
  // Only the workspace's admins may read the counts (they include its keys and mappings): others
  // see the rest of the page without a refusal they did not ask for.
  if (summary.error instanceof GeoPlaneApiError && summary.error.status === 403) return null;
  const s = summary.data;
  const imports = s ? Object.entries(s.imports.by_status).filter(([, n]) => n > 0) : [];
  return (
    <section aria-labelledby="summary-heading">
      <h2 id="summary-heading">Contents</h2>
      <ErrorNote error={summary.error} />
      {s ? (
        <dl class="facts">
          <dt>Services</dt>
          <dd>{formatCount(s.services)}</dd>
          <dt>Layers</dt>
          <dd>
            {formatCount(s.layers.total)} ({formatCount(s.layers.enabled)} published,{' '}
            {plural(s.layers.disabled, 'draft')})
          </dd>
          <dt>Styles</dt>
          <dd>{formatCount(s.styles)}</dd>
          <dt>Imports</dt>
          <dd>
            {formatCount(s.imports.total)}
            {imports.length > 0
              ? ` (${imports.map(([status, n]) => `${formatCount(n)} ${statusText(status)}`).join(', ')})`
              : ''}
          </dd>
          <dt>API keys</dt>
          <dd>
            {formatCount(s.api_keys.total)} ({formatCount(s.api_keys.active)} active,{' '}
            {formatCount(s.api_keys.revoked)} revoked)
          </dd>
          <dt>Claim mappings</dt>
          <dd>{formatCount(s.claim_mappings)}</dd>
        </dl>
      ) : null}
    </section>
  );
}
