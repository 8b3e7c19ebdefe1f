/**
 * What a workspace's tile cache holds (tiles, bytes, quota, the clear generation, where tiles
 * live), and clearing its caches after a confirmation.
 */
import { useState } from 'preact/hooks';
import { api, call, type Schemas } from '#console/api.ts';
import { Loaded, useAction } from '#console/components/data.tsx';
import { Confirm } from '#console/components/dialogs.tsx';
import { ErrorNote, Notice } from '#console/components/forms.tsx';
import { When } from '#console/components/page-parts.tsx';
import { formatBytes, formatCount, plural } from '#console/format.ts';
import { paths } from '#console/routes.ts';

type Stats = Schemas['TileCacheStats'];
type Cleared = Schemas['WorkspaceCacheCleared'];

const STORE: Record<Stats['store'], string> = {
  s3: 'S3 (the tile cache bucket)',
  directory: "the local host's directory",
  none: 'nowhere: no tile store is configured',
};

function StatsFacts({ stats, workspace }: { stats: Stats; workspace: string }) {
  return (
    <>
      <dl class="facts">
        <dt>Tiles stored</dt>
        <dd>{formatCount(stats.entries)}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(stats.bytes)}</dd>
        <dt>Quota</dt>
        <dd>
          {stats.quota_bytes !== undefined
            ? `${formatBytes(stats.quota_bytes)} (${Math.round((stats.bytes / Math.max(stats.quota_bytes, 1)) * 100)} % used)`
            : 'none'}
        </dd>
        <dt>Generation</dt>
        <dd>{formatCount(stats.generation)}</dd>
        <dt>Last cleared</dt>
        <dd>{stats.cleared_at ? <When at={stats.cleared_at} /> : 'never'}</dd>
        <dt>Tiles live in</dt>
        <dd>{STORE[stats.store]}</dd>
        <dt>Cache</dt>
        <dd>{stats.cache_enabled ? 'on' : 'off'}</dd>
      </dl>
      {stats.cache_enabled ? null : (
        <p>
          The tile cache is off: tiles are rendered on every request and seed jobs are refused. It is switched
          in the workspace's <a href={paths.settings(workspace)}>OGC API Tiles settings</a>.
        </p>
      )}
    </>
  );
}

/** The statistics section; `manage`: the Clear caches button (and its confirmation) is offered. */
export function CacheStats({
  workspace,
  stats,
  manage,
}: {
  workspace: string;
  stats: { data?: Stats; error?: unknown; loading: boolean; reload: () => Promise<void> };
  manage: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [cleared, setCleared] = useState<Cleared>();
  const clear = useAction(async () => {
    setAsking(false);
    setCleared(undefined);
    setCleared(
      await call(api.POST('/api/v1/workspaces/{workspace}/cache/clear', { params: { path: { workspace } } })),
    );
    void stats.reload();
  });
  return (
    <>
      <section aria-labelledby="cache-stats-heading">
        <h2 id="cache-stats-heading">Statistics</h2>
        <Loaded state={stats}>{(s) => <StatsFacts stats={s} workspace={workspace} />}</Loaded>
        {manage ? (
          <>
            <div class="actions">
              <button type="button" class="danger" disabled={clear.busy} onClick={() => setAsking(true)}>
                Clear caches…
              </button>
            </div>
            <ErrorNote error={clear.error} />
            <Notice>
              {cleared
                ? `Cleared (${cleared.cleared.join(', ')}): generation ${formatCount(cleared.generation)}, effective within ${cleared.effective_within_seconds} s. Earlier generations still occupy ${plural(cleared.stale_entries, 'tile')} (${formatBytes(cleared.stale_bytes)}) until a truncate job removes them.`
                : undefined}
            </Notice>
          </>
        ) : null}
      </section>
      <Confirm
        open={asking}
        title={`Clear the caches of ${workspace}?`}
        confirmLabel="Clear caches"
        danger
        onConfirm={() => void clear.run()}
        onCancel={() => setAsking(false)}
      >
        <p>
          Every cached tile of the workspace misses from the next request on (the generation moves), and each
          data-plane instance drops what it holds of the workspace. The stored tiles stay counted until a
          truncate job removes them.
        </p>
      </Confirm>
    </>
  );
}
