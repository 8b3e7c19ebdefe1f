/** The service an import published, by its current name: renamed or deleted on its own since. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '#console/api.ts';
import { paths } from '#console/routes.ts';
import { type ImportJob, UNPUBLISHED } from './import-status.ts';

/** The service an import published may still hold it: not while (or after) it is rolled back. */
const mayHoldService = (job: ImportJob) => Boolean(job.service_id) && !UNPUBLISHED.includes(job.status);

/**
 * The current names of these imports' services (false: gone; absent: being looked up). A service
 * can be renamed or deleted on its own after its import published it, and the import keeps the
 * id and the name it had. One getService per service, again when an import changes.
 */
export function useLiveServices(workspace: string, jobs: ImportJob[]): Map<string, string | false> {
  const [found, setFound] = useState(() => new Map<string, string | false>());
  const key = jobs
    .filter(mayHoldService)
    .map((job) => `${job.service_id}@${job.version}`)
    .sort()
    .join(',');
  useEffect(() => {
    let stopped = false;
    const ids = [...new Set(key ? key.split(',').map((k) => k.split('@')[0] as string) : [])];
    for (const id of ids) {
      api
        .GET('/api/v1/workspaces/{workspace}/services/{service}', {
          params: { path: { workspace, service: id } },
        })
        .then(
          (result) => {
            // Only a 404 says gone; another failure leaves the name shown without a verdict.
            const alive = result.data ? result.data.name : result.response.status === 404 ? false : undefined;
            if (stopped || alive === undefined) return;
            setFound((f) => (f.get(id) === alive ? f : new Map(f).set(id, alive)));
          },
          () => undefined,
        );
    }
    return () => {
      stopped = true;
    };
  }, [workspace, key]);
  return found;
}

/** The import's service: a link only while it exists, "(deleted)" once it is gone. */
export function ServiceOf({
  workspace,
  job,
  live,
}: {
  workspace: string;
  job: ImportJob;
  live: Map<string, string | false>;
}) {
  if (!job.service_id) {
    // A file whose every layer goes into an existing layer creates no service (ADR 0127).
    if (job.plan?.layers.length && job.plan.layers.every((l) => l.target))
      return <>none: into existing layers</>;
    return <>{job.service_name} (not published)</>;
  }
  if (job.status === 'rolling_back')
    return (
      <>
        {job.service_name} <span class="gone">(being deleted)</span>
      </>
    );
  const alive = mayHoldService(job) ? live.get(job.service_id) : false;
  if (alive) return <a href={paths.service(workspace, alive)}>{alive}</a>;
  if (alive === false)
    return (
      <>
        {job.service_name} <span class="gone">(deleted)</span>
      </>
    );
  return <>{job.service_name}</>;
}
