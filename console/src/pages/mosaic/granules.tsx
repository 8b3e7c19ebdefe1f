/** A mosaic's paged granules, filtered by bbox and time, each removable (If-Match). */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, call, etag, type Schemas } from '#console/api.ts';
import { Confirm, useConfirmed } from '#console/components/dialogs.tsx';
import { Field, issueFor, Notice } from '#console/components/forms.tsx';
import { PagedTable, RowError, usePagedList } from '#console/components/lists.tsx';
import { When } from '#console/components/page-parts.tsx';

type Granule = Schemas['MosaicGranule'];

const num = (n: number) => (Math.abs(n) >= 1000 ? n.toFixed(1) : n.toFixed(4));

export function Granules({
  workspace,
  service,
  generation,
  onChanged,
}: {
  workspace: string;
  service: string;
  generation: number | undefined;
  onChanged: () => void;
}) {
  const [bbox, setBbox] = useState('');
  const [time, setTime] = useState('');
  const [filter, setFilter] = useState<{ bbox?: string; time?: string }>({});
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules', {
          params: { path: { workspace, service }, query: { limit: 50, ...page, ...filter } },
        }),
      ),
    [workspace, service, filter, generation],
  );
  const [deleted, setDeleted] = useState<string>();
  const remove = useConfirmed(async (granule: Granule) => {
    setDeleted(undefined);
    await call(
      api.DELETE('/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules/{granule}', {
        params: {
          path: { workspace, service, granule: granule.id },
          header: { 'If-Match': etag(granule.version) },
        },
      }),
    );
    setDeleted(`Removed ${granule.source_uri}.`);
    onChanged();
  });
  return (
    <section aria-labelledby="granules-heading">
      <h2 id="granules-heading">Granules</h2>
      <form
        class="row search"
        onSubmit={(event) => {
          event.preventDefault();
          list.firstPage();
          setFilter({
            ...(bbox.trim() ? { bbox: bbox.trim() } : {}),
            ...(time.trim() ? { time: time.trim() } : {}),
          });
        }}
      >
        <Field
          label="Bounding box"
          hint="minx,miny,maxx,maxy in the granules' coordinates."
          error={issueFor(list.error, 'query.bbox')}
        >
          {(props) => <input {...props} value={bbox} onInput={(e) => setBbox(e.currentTarget.value)} />}
        </Field>
        <Field
          label="Time"
          hint="An RFC 3339 instant or start/end (.. for open)."
          error={issueFor(list.error, 'query.time')}
        >
          {(props) => <input {...props} value={time} onInput={(e) => setTime(e.currentTarget.value)} />}
        </Field>
        <button type="submit">Filter</button>
      </form>
      <Notice>{deleted}</Notice>
      <PagedTable
        state={list}
        pager={list.pager}
        items={(data) => data.granules}
        columns={['Source', 'CRS', 'Bounding box', 'Size', 'Bands', 'Time', 'Action']}
        caption={(data) => `Generation ${data.generation}`}
        empty={
          <p role="status">
            No granules{filter.bbox || filter.time ? ' match' : ' yet: harvest some above'}.
          </p>
        }
      >
        {(g) => (
          <Fragment key={g.id}>
            <tr>
              <td>
                <code>{g.source_uri}</code>
              </td>
              <td>{g.crs}</td>
              <td>{g.bbox.map(num).join(', ')}</td>
              <td>
                {g.width} × {g.height}
              </td>
              <td>
                {g.band_count} ({g.data_type})
              </td>
              <td>{g.time ? <When at={g.time} /> : '—'}</td>
              <td>
                <button
                  type="button"
                  class="danger"
                  aria-label={`Remove ${g.source_uri}`}
                  onClick={() => remove.ask(g)}
                >
                  Remove
                </button>
              </td>
            </tr>
            <RowError error={remove.last?.id === g.id ? remove.error : undefined} colSpan={7} />
          </Fragment>
        )}
      </PagedTable>
      <Confirm {...remove.dialog} title="Remove this granule?" confirmLabel="Remove granule" danger>
        <p>
          <code>{remove.asking?.source_uri}</code> leaves the mosaic in a new generation; the file itself
          stays where it is.
        </p>
      </Confirm>
    </section>
  );
}
