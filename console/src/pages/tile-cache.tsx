/**
 * A workspace's persistent tile cache (ADR 0139): what it holds (tiles, bytes, quota, the clear
 * generation, where tiles live), clearing its caches after a confirmation, seed / reseed /
 * truncate jobs (layers by public id, a zoom range, an optional bbox), and the jobs with a live
 * progress bar (the progress polled every second) and a Cancel button while one runs. Reading
 * needs the viewer role; starting, cancelling and clearing the workspace's admins: the others see
 * the figures and the jobs without those controls.
 */
import { useRoute } from 'preact-iso';
import { api, call } from '#console/api.ts';
import { useLoad } from '#console/components/data.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { roleIn, useSession } from '#console/session.ts';
import { CacheStats } from './tile-cache/cache-stats.tsx';
import { JOBS, type Job, JobList, unfinished } from './tile-cache/job-list.tsx';
import { StartJob } from './tile-cache/start-job.tsx';

/** The built-in roles below admin: they may read the cache, not change it. */
const READ_ONLY_ROLES = new Set(['viewer', 'editor']);

export function TileCachePage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const me = useSession();
  const role = roleIn(me, workspace);
  // The API decides; the controls are offered to those it will not refuse for their built-in role.
  const manage = role !== undefined && !READ_ONLY_ROLES.has(role);
  const stats = useLoad(
    () =>
      call(api.GET('/api/v1/workspaces/{workspace}/tile-cache/stats', { params: { path: { workspace } } })),
    [workspace],
  );
  const jobs = useLoad(async () => {
    const all: Job[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const list = await call(
        api.GET(JOBS, {
          params: { path: { workspace }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
        }),
      );
      all.push(...list.jobs);
      cursor = list.next_cursor ?? undefined;
      if (!cursor) break;
    }
    // Listed in creation order: the newest first here.
    return all.reverse();
  }, [workspace]);
  const refresh = () => {
    void jobs.reload();
    void stats.reload();
  };
  const running = jobs.data?.some((job) => unfinished(job.status)) ?? false;

  return (
    <>
      <PageTitle title={`Tile cache · ${workspace}`}>Tile cache of {workspace}</PageTitle>
      <p>
        The vector tiles the workspace's OGC API Tiles served or a job rendered, kept per layer under a key
        carrying what their bytes depend on: a changed layer or style misses at once.
      </p>
      <CacheStats workspace={workspace} stats={stats} manage={manage} />
      {manage ? <StartJob workspace={workspace} busy={running} onStarted={() => refresh()} /> : null}
      <JobList workspace={workspace} jobs={jobs} manage={manage} onChanged={refresh} />
    </>
  );
}
