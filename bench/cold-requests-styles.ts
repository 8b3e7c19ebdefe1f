/** Section 2's cold requests of the settings, tile matrix set, style and style asset routes. */
import { PNG, short, styleBody, tileMatrixSet } from './cold-fixtures.ts';
import { type Case, type Kit, settingsBody } from './cold-request-kit.ts';

/** The requests of these routes (see kit). */
export function styleRequests(k: Kit): Record<string, Omit<Case, 'operation'>> {
  const { f, W, example, get, run, call } = k;
  return {
    // settings: the examples
    ...Object.fromEntries(
      ['OGCAPI', 'OGCTilesAPI', 'WCS', 'WFS', 'WMS', 'WMTS'].flatMap((kind) => [
        [`get${kind}Settings`, { request: get(W) }],
        [
          `update${kind}Settings`,
          {
            request: call(
              'PUT',
              () => W,
              () => ({ body: settingsBody(example(`update${kind}Settings`), f) }),
            ),
          },
        ],
      ]),
    ),
    // tile matrix sets
    getTileMatrixSet: { request: get({ tileMatrixSet: 'WebMercatorQuad' }) },
    listTileMatrixSets: { request: get() },
    listWorkspaceTileMatrixSets: { request: get(W) },
    putTileMatrixSet: {
      request: () => {
        const id = `ColdNew${short()}`;
        return { method: 'PUT', path: '', pathParameters: { tileMatrixSet: id }, body: tileMatrixSet(id) };
      },
    },
    deleteTileMatrixSet: {
      request: call('DELETE', (r) => ({ tileMatrixSet: run(r).tileMatrixSet })),
    },
    // styles and assets
    createStyle: {
      // The API's example style without its icon layer (whose asset this workspace lacks).
      request: call(
        'POST',
        () => W,
        () => ({ body: styleBody(`cold-${short()}`) }),
      ),
    },
    getStyle: { request: get({ ...W, style: f.style }) },
    listStyles: { request: get(W) },
    updateStyle: {
      request: call(
        'PUT',
        () => ({ ...W, style: f.style }),
        () => ({ body: { ...styleBody(f.style), title: `Cold ${short()}` } }),
      ),
    },
    deleteStyle: {
      request: call('DELETE', (r) => ({ ...W, style: run(r).style })),
    },
    getStyleAsset: { request: get({ ...W, asset: f.asset }) },
    listStyleAssets: { request: get(W) },
    putStyleAsset: {
      request: call(
        'PUT',
        () => ({ ...W, asset: `cold-${short()}` }),
        () => ({ bytes: { data: PNG, contentType: 'image/png' } }),
      ),
    },
    deleteStyleAsset: {
      request: call('DELETE', (r) => ({ ...W, asset: run(r).asset })),
    },
  };
}
