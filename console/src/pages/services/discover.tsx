/** Discovering a PostGIS service's geometry tables, each publishable as a layer. */
import { useState } from 'preact/hooks';
import { api, call, type Schemas } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote } from '#console/components/forms.tsx';
import { Table } from '#console/components/lists.tsx';
import { PublishLayer } from './publish-layer.tsx';

type Discovered = Schemas['DiscoveredLayer'];

function Extent({ extent }: { extent: Discovered['extent'] }) {
  if (!extent) return <span>—</span>;
  const f = (n: number) => n.toFixed(4);
  return (
    <span>
      {f(extent.min_x)}, {f(extent.min_y)} – {f(extent.max_x)}, {f(extent.max_y)}
    </span>
  );
}

export function Discover({ workspace, service }: { workspace: string; service: string }) {
  const [found, setFound] = useState<Discovered[]>();
  const [picked, setPicked] = useState<Discovered>();
  const discover = useAction(async () => {
    setPicked(undefined);
    const result = await call(
      api.POST('/api/v1/workspaces/{workspace}/services/{service}/discover', {
        params: { path: { workspace, service } },
      }),
    );
    setFound(result.layers);
  });
  return (
    <section aria-labelledby="discover-heading">
      <h2 id="discover-heading">Discover tables</h2>
      <p>Lists the geometry tables and views the service's user can read; publish any of them as a layer.</p>
      <button type="button" disabled={discover.busy} onClick={() => void discover.run()}>
        {discover.busy ? 'Discovering…' : 'Discover'}
      </button>
      <ErrorNote error={discover.error} />
      {found ? (
        found.length === 0 ? (
          <p role="status">No readable geometry tables were found.</p>
        ) : (
          <Table
            columns={['Schema', 'Table', 'Geometry column', 'Geometry type', 'SRID', 'Extent', 'Action']}
            caption={<>{found.length} discovered tables</>}
          >
            {found.map((d) => (
              <tr key={d.name}>
                <td>{d.schema}</td>
                <td>
                  <code>{d.name}</code>
                </td>
                <td>{d.geometry_column}</td>
                <td>{d.geometry_type}</td>
                <td>{d.srid}</td>
                <td>
                  <Extent extent={d.extent} />
                </td>
                <td>
                  <button type="button" aria-label={`Publish ${d.name}`} onClick={() => setPicked(d)}>
                    Publish
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        )
      ) : null}
      {picked ? (
        <PublishLayer
          key={picked.name}
          workspace={workspace}
          service={service}
          source={picked.name}
          defaults={{ public_id: picked.table, title: picked.table }}
          heading={`Publish ${picked.name}`}
          onCancel={() => setPicked(undefined)}
        />
      ) : null}
    </section>
  );
}
