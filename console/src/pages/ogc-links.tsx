/**
 * Where the data plane serves what the console manages (DESIGN §8a): a workspace's OGC API URL,
 * and a layer's collection, items, tiles and TileJSON URLs with how GDAL and QGIS connect to them.
 */
import { CopyField } from '#console/components/page-parts.tsx';
import { collectionUrls, gdalCommand, ogcApiUrl, styleUrl } from './layer-style.ts';
import './map.css';

/** A local host (self-signed certificate): GDAL must be told to trust it. */
const isLoopback = () => /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(location.hostname);

/** The workspace's OGC API (landing page) URL, copyable. */
export function WorkspaceOgcApi({ workspace }: { workspace: string }) {
  const url = ogcApiUrl(location.origin, workspace);
  return (
    <section aria-labelledby="ogc-heading">
      <h2 id="ogc-heading">OGC API</h2>
      <p>
        Every enabled layer of the workspace is a collection of this OGC API (Features and vector Tiles);
        public layers need no credential, the others the same credentials as the management API.
      </p>
      <CopyField
        label="OGC API URL"
        value={url}
        hint="Its landing page links to the collections, tiles and styles."
      />
    </section>
  );
}

/** What the links need of a layer (the management API's Layer). */
export interface LinkedLayer {
  public_id: string;
  enabled: boolean;
  public: boolean;
  default_style?: string;
}

/** A layer's OGC API URLs, copyable, and how to connect GDAL and QGIS to them. */
export function LayerOgcLinks({ workspace, layer }: { workspace: string; layer: LinkedLayer }) {
  const urls = collectionUrls(location.origin, workspace, layer.public_id);
  const gdal = gdalCommand(urls, layer.public_id);
  return (
    <section aria-labelledby="ogc-heading">
      <h2 id="ogc-heading">OGC API</h2>
      <p>
        {layer.enabled
          ? `Served as the collection ${layer.public_id} of the workspace's OGC API`
          : 'Not served while the layer is a draft (disabled): these URLs answer 404 until it is enabled'}
        {layer.public
          ? ', readable without a credential.'
          : '; restricted: a client needs a credential (an API key in X-API-Key, or a bearer token) and a role that may read it.'}
      </p>
      <CopyField label="Collection" value={urls.collection} />
      <CopyField
        label="Features (GeoJSON items)"
        value={urls.items}
        hint="Add limit=… or bbox=… to the query to page through or filter them."
      />
      <CopyField
        label="Vector tiles (URL template)"
        value={urls.tiles}
        hint="WebMercatorQuad; {z}/{y}/{x} are the tile matrix, row and column. One MVT layer, named after the public id."
      />
      <CopyField label="TileJSON" value={urls.tileJson} />
      {layer.default_style ? (
        <CopyField
          label="Default style (Mapbox GL)"
          value={styleUrl(location.origin, workspace, layer.default_style)}
        />
      ) : null}
      <h3>Connect from GDAL or QGIS</h3>
      <CopyField label="GDAL command (OGC API - Features)" value={gdal} />
      <CopyField
        label="QGIS connection URL (WFS / OGC API - Features)"
        value={urls.api}
        hint={`In QGIS: Layer ▸ Add Layer ▸ Add WFS / OGC API - Features Layer…, New, paste this URL, set the version to "OGC API - Features", Connect and pick ${layer.public_id}.`}
      />
      <ul class="ogc-hints">
        <li>
          Vector tiles in QGIS: Layer ▸ Add Layer ▸ Add Vector Tile Layer…, New ▸ New Generic Connection, with
          the tiles URL template above.
        </li>
        {layer.public ? null : (
          <li>
            With a credential: add <code>--config GDAL_HTTP_HEADERS "X-API-Key: …"</code> to the GDAL command;
            in QGIS give the connection an authentication configuration of type API Header with the header{' '}
            <code>X-API-Key</code>.
          </li>
        )}
        {isLoopback() ? (
          <li>
            The local host's certificate is self-signed: point GDAL at it with{' '}
            <code>--config CURL_CA_BUNDLE tls-cert.pem</code> (from the host's data directory), or trust it in
            QGIS's certificate manager.
          </li>
        ) : null}
      </ul>
    </section>
  );
}
