/** An import's preview map: its staged features over the base map. */
import { useState } from 'preact/hooks';
import { defaultLayers, featuresBox } from '../layer-style.ts';
import { DataMap } from './data-map.tsx';

/** GeoJSON features in longitude/latitude (an import's staged features) on the base map. */
export function FeaturesMap({
  features,
  label,
}: {
  features: readonly { geometry?: unknown; properties?: unknown }[];
  label: string;
}) {
  const box = featuresBox(features);
  const [tileError, setTileError] = useState<string>();
  const key = JSON.stringify(box ?? null) + features.length;
  return (
    <figure class="extent-preview">
      <figcaption>{label}</figcaption>
      <DataMap
        key={key}
        label={label}
        without="The features are listed in the table below."
        data={{
          source: {
            type: 'geojson',
            data: {
              type: 'FeatureCollection',
              features: features
                .filter((f) => f.geometry)
                .map((f) => ({
                  type: 'Feature',
                  properties: {},
                  geometry: f.geometry as GeoJSON.Geometry,
                })),
            },
          },
          layers: defaultLayers(undefined),
          ...(box ? { box } : {}),
        }}
        onTileError={(reason) => setTileError((seen) => seen ?? reason)}
      />
      {tileError ? <p role="status">The features could not be drawn: {tileError}.</p> : null}
    </figure>
  );
}
