/**
 * The caches (ADR 0139), for super_admin: what each holds, its bounds and epoch, when it was last
 * cleared; clearing one type, or all of them, after a confirmation — the answer says the epochs
 * now and within how many seconds every data-plane instance follows.
 */
import { useState } from 'preact/hooks';
import { api, call, type Schemas } from '#console/api.ts';
import { Loaded, useAction, useLoad } from '#console/components/data.tsx';
import { Confirm } from '#console/components/dialogs.tsx';
import { ErrorNote, Notice } from '#console/components/forms.tsx';
import { Table } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { formatCount } from '#console/format.ts';

type CacheType = Schemas['CacheStats']['caches'][number]['type'];
type Cleared = Schemas['CachesCleared'];

const WHAT_CLEARING_DOES: Record<CacheType, string> = {
  tiles:
    "Every workspace's cached tiles miss from the next request on; what they occupy stays counted until a truncate job removes it.",
  descriptions: 'Every data-plane instance reads layer source descriptions from their databases again.',
  connections: 'Every data-plane instance opens service connections (and decrypts their passwords) again.',
};

export function CachesPage() {
  const stats = useLoad(() => call(api.GET('/api/v1/cache/stats')), []);
  const [asking, setAsking] = useState<CacheType | 'all'>();
  const [cleared, setCleared] = useState<Cleared>();
  const clear = useAction(async (which: CacheType | 'all') => {
    setAsking(undefined);
    setCleared(undefined);
    setCleared(
      await call(
        which === 'all'
          ? api.POST('/api/v1/cache/clear')
          : api.POST('/api/v1/cache/clear/{cacheType}', { params: { path: { cacheType: which } } }),
      ),
    );
    void stats.reload();
  });
  return (
    <>
      <PageTitle title="Caches">Caches</PageTitle>
      <p>
        The persistent tile cache (per workspace: its Tile cache page) and what each data-plane instance keeps
        in memory. A clear moves the type's epoch; every instance drops that cache on its next request after
        reading it.
      </p>
      <Loaded state={stats}>
        {(data) => (
          <Table
            columns={['Cache', 'Holds', 'Scope', 'Bounds', 'Epoch', 'Last cleared', 'Actions']}
            caption="The caches"
          >
            {data.caches.map((c) => (
              <tr key={c.type}>
                <th scope="row">{c.type}</th>
                <td>{c.holds}</td>
                <td>{c.scope === 'persistent' ? 'persistent (tile store)' : 'per instance (memory)'}</td>
                <td>
                  {[
                    c.ttl_seconds !== undefined ? `${formatCount(c.ttl_seconds)} s TTL` : undefined,
                    c.max_entries !== undefined ? `at most ${formatCount(c.max_entries)} entries` : undefined,
                  ]
                    .filter(Boolean)
                    .join(', ') || '—'}
                </td>
                <td>{formatCount(c.epoch)}</td>
                <td>{c.cleared_at ? <When at={c.cleared_at} /> : 'never'}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={clear.busy}
                    aria-label={`Clear ${c.type}`}
                    onClick={() => setAsking(c.type)}
                  >
                    Clear…
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <div class="actions">
        <button type="button" class="danger" disabled={clear.busy} onClick={() => setAsking('all')}>
          Clear all…
        </button>
      </div>
      <ErrorNote error={clear.error} />
      <Notice>
        {cleared
          ? `Cleared ${cleared.cleared.join(', ')}: epochs now tiles ${cleared.epochs.tiles}, descriptions ${cleared.epochs.descriptions}, connections ${cleared.epochs.connections}; effective within ${cleared.effective_within_seconds} s.`
          : undefined}
      </Notice>
      <Confirm
        open={asking !== undefined}
        title={asking === 'all' ? 'Clear every cache?' : `Clear the ${asking ?? ''} cache?`}
        confirmLabel={asking === 'all' ? 'Clear all' : 'Clear'}
        danger
        onConfirm={() => {
          if (asking) void clear.run(asking);
        }}
        onCancel={() => setAsking(undefined)}
      >
        {asking === 'all' ? (
          <ul>
            {(Object.keys(WHAT_CLEARING_DOES) as CacheType[]).map((type) => (
              <li key={type}>{WHAT_CLEARING_DOES[type]}</li>
            ))}
          </ul>
        ) : asking ? (
          <p>{WHAT_CLEARING_DOES[asking]}</p>
        ) : null}
      </Confirm>
    </>
  );
}
