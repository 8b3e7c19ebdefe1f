/** Where one import is: the file read and the features loaded, one bar per pass. */
import { Progress, useMonotone } from '#console/components/page-parts.tsx';
import { bytesOf, formatCount as count, countOf, formatBytes, plural } from '#console/format.ts';
import { type ImportJob, LOADED, reading, working } from './import-status.ts';

/** The features discovery counted in the layers the plan loads. */
function plannedFeatures(job: ImportJob): number {
  const layers = job.discovery?.layers ?? [];
  const planned = job.plan?.layers.map((l) => l.source_layer);
  return layers
    .filter((l) => !planned || planned.includes(l.name))
    .reduce((sum, l) => sum + l.feature_count, 0);
}

/**
 * Where the import is, one bar per pass, each only ever moving forward: the file read (discovery
 * reads it whole once; read, it stays read) and the features loaded (full once the import is
 * loaded). The job's `processed_bytes` counts discovery's pass and then the load's own, which
 * starts again from 0 and need not reach the file's size: shown as it comes, it made the bar run
 * backwards and left a loaded import at "77 %".
 */
export function JobProgress({ job }: { job: ImportJob }) {
  const size = job.discovery?.size_bytes ?? 0;
  const features = plannedFeatures(job);
  const loaded = LOADED.includes(job.status);
  const live = working(job);
  // A new run (a retry, a reload with a changed plan) starts its bar again; polls within it never go back.
  const run = `${job.id}:${job.retry_count}:${job.status === 'running' ? 'running' : 'settled'}`;
  return (
    <div aria-live="off">
      {job.discovery ? (
        <>
          <Progress value={size} max={size || 1} label="File read" done />
          <p class="progress-counts">{bytesOf(size, size)} read</p>
        </>
      ) : reading(job) ? (
        <p class="progress-counts">Reading the file: {formatBytes(job.processed_bytes)} so far</p>
      ) : null}
      {features > 0 ? (
        <>
          <Progress
            value={job.processed_features}
            max={features}
            label="Features loaded"
            done={loaded}
            run={run}
          />
          <p class="progress-counts">
            <FeaturesLoaded job={job} planned={features} loaded={loaded} run={run} /> features loaded
          </p>
        </>
      ) : job.discovery ? (
        <p class="progress-counts">{count(job.processed_features)} features loaded</p>
      ) : null}
      {job.total_layers > 0 ? (
        <p class="progress-counts">
          {count(loaded ? job.total_layers : job.processed_layers)} of {plural(job.total_layers, 'layer')}{' '}
          done
          {live ? ' — updating every second' : ''}
        </p>
      ) : live ? (
        <p class="progress-counts">Updating every second.</p>
      ) : null}
    </div>
  );
}

/** "250 of 300", as the bar beside it: never fewer than shown before in this run, all once loaded. */
function FeaturesLoaded({
  job,
  planned,
  loaded,
  run,
}: {
  job: ImportJob;
  planned: number;
  loaded: boolean;
  run: string;
}) {
  const shown = useMonotone(loaded ? planned : Math.min(job.processed_features, planned), run);
  return <>{countOf(shown, planned)}</>;
}
