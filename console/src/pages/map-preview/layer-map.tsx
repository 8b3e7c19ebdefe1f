/**
 * The layer page's map: the layer drawn from its own vector tiles over the base map, styled by its
 * default style or a default for its geometry type, fitted to its extent, with the extent as
 * numbers beside it.
 */
import { useEffect, useState } from 'preact/hooks';
import { paths } from '#console/routes.ts';
import { DataMap, type Extent } from './data-map.tsx';
import { type MapLayer, type Prepared, prepareLayerMap } from './layer-map-data.ts';

/** The extent as numbers (west, south, east, north and the CRS). */
function ExtentFacts({ extent }: { extent: Extent }) {
  const f = (n: number) => (Math.abs(n) >= 1000 ? n.toFixed(1) : n.toFixed(5));
  return (
    <dl class="facts">
      <dt>West (min x)</dt>
      <dd>{f(extent.min_x)}</dd>
      <dt>South (min y)</dt>
      <dd>{f(extent.min_y)}</dd>
      <dt>East (max x)</dt>
      <dd>{f(extent.max_x)}</dd>
      <dt>North (max y)</dt>
      <dd>{f(extent.max_y)}</dd>
      <dt>CRS</dt>
      <dd>EPSG:{extent.srid}</dd>
    </dl>
  );
}

/**
 * The layer drawn from its own vector tiles over the base map, fitted to its extent, with the
 * extent as numbers (which stay when the browser can't draw a map).
 */
export function LayerMap({ workspace, layer }: { workspace: string; layer: MapLayer }) {
  const [prepared, setPrepared] = useState<Prepared>();
  const [tileError, setTileError] = useState<string>();
  const key = [
    workspace,
    layer.public_id,
    layer.enabled,
    layer.geometry_type,
    layer.default_style,
    JSON.stringify(layer.native_extent ?? null),
  ].join('|');
  useEffect(() => {
    let cancelled = false;
    setPrepared(undefined);
    setTileError(undefined);
    void prepareLayerMap(workspace, layer).then((result) => {
      if (!cancelled) setPrepared(result);
    });
    return () => {
      cancelled = true;
    };
  }, [key]);

  return (
    <figure class="extent-preview">
      <figcaption>{`${layer.public_id} on the map`}</figcaption>
      {layer.native_extent ? <ExtentFacts extent={layer.native_extent} /> : null}
      {prepared ? (
        <>
          <DataMap
            key={key}
            data={prepared.data}
            label={`Map of ${layer.public_id}`}
            without={
              layer.native_extent
                ? 'The extent is shown as numbers above.'
                : 'The OGC API URLs below still serve the layer.'
            }
            onTileError={(reason) => setTileError((seen) => seen ?? reason)}
          />
          <ul class="map-notes">
            {prepared.notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
            {prepared.tilesOff ? (
              <li>
                <a href={paths.settings(workspace)}>Turn on OGC API Tiles in the workspace's settings</a> to
                draw the layer from its vector tiles.
              </li>
            ) : null}
            {tileError ? <li role="status">Some of the map's data could not be read: {tileError}.</li> : null}
          </ul>
        </>
      ) : (
        <p role="status">Loading the map preview…</p>
      )}
    </figure>
  );
}
