import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '#domain/errors.ts';
import { checkStyleBody, loadStyleValidator, MAX_STYLE_JSON_DEPTH } from '#domain/styles.ts';
import { canonicalJson } from '#domain/tile-matrix-sets.ts';
import { MAX_XML_DEPTH, parseXml } from '#domain/xml.ts';
import { toErrorResponse } from '#http/errors.ts';
import { isItemTooDeep, isItemTooLarge, translateStoreError } from '#store/errors.ts';

// Mapbox bodies are checked by the MapLibre validator, loaded on first use (ADR 0100).
beforeAll(async () => {
  await loadStyleValidator();
});

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as InvalidInputError).reason;
  }
  return undefined;
}

/** `depth` nested elements, the outermost named `root`. */
const nestedXml = (depth: number, root = 'root') =>
  `<${root}>${'<a>'.repeat(depth - 1)}x${'</a>'.repeat(depth - 1)}</${root}>`;

/** A Mapbox style `depth` levels deep counting its own object (metadata holds nested arrays). */
const deepStyle = (depth: number) =>
  `{"version":8,"sources":{},"layers":[],"metadata":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('parseXml refuses excess nesting with a 400, at any depth', () => {
  it(`accepts ${MAX_XML_DEPTH} nested elements and keeps them in order with their text`, () => {
    const doc = parseXml(nestedXml(MAX_XML_DEPTH), 'test');
    let node = doc.root;
    let levels = 1;
    while (node.children[0]) {
      node = node.children[0];
      levels++;
    }
    expect(levels).toBe(MAX_XML_DEPTH);
    expect(node.text).toBe('x');
    const ordered = parseXml('<r>a<b/>c<d>e</d><f/></r>', 'test').root;
    expect(ordered.children.map((c) => c.name)).toEqual(['b', 'd', 'f']);
    expect(ordered.text).toBe('ac');
  });

  it.each([MAX_XML_DEPTH + 1, MAX_XML_DEPTH + 2, MAX_XML_DEPTH + 3, 1000, 100_000])(
    'refuses %i nested elements with xml_too_deep',
    (depth) => {
      expect(reasonOf(() => parseXml(nestedXml(depth), 'test'))).toBe('xml_too_deep');
    },
  );

  it('refuses deep nesting in any element name and namespace (SLD, SE, SVG)', () => {
    const se = `<se:FeatureTypeStyle xmlns:se="x">${'<se:Rule>'.repeat(200)}${'</se:Rule>'.repeat(200)}</se:FeatureTypeStyle>`;
    expect(reasonOf(() => parseXml(se, 'style body'))).toBe('xml_too_deep');
    expect(reasonOf(() => checkStyleBody('se_1.1.0', se))).toBe('xml_too_deep');
    const sld = `<StyledLayerDescriptor version="1.0.0">${'<a>'.repeat(150)}${'</a>'.repeat(150)}</StyledLayerDescriptor>`;
    expect(reasonOf(() => checkStyleBody('sld_1.0.0', sld))).toBe('xml_too_deep');
  });

  it('handles a document of many siblings without recursion limits', () => {
    const doc = parseXml(`<r>${'<a/>'.repeat(200_000)}</r>`, 'test');
    expect(doc.root.children).toHaveLength(200_000);
  });
});

describe('Mapbox style bodies: depth is checked before anything recursive walks them', () => {
  it(`accepts a style ${MAX_STYLE_JSON_DEPTH} levels deep, as an object and as JSON text`, () => {
    expect(checkStyleBody('mapbox', JSON.parse(deepStyle(MAX_STYLE_JSON_DEPTH))).text.length).toBeGreaterThan(
      0,
    );
    expect(checkStyleBody('mapbox', deepStyle(MAX_STYLE_JSON_DEPTH)).text.length).toBeGreaterThan(0);
  });

  it.each([MAX_STYLE_JSON_DEPTH + 1, 6000, 100_000])(
    'refuses a style %i levels deep with json_too_deep',
    (depth) => {
      expect(reasonOf(() => checkStyleBody('mapbox', JSON.parse(deepStyle(depth))))).toBe('json_too_deep');
      expect(reasonOf(() => checkStyleBody('mapbox', deepStyle(depth)))).toBe('json_too_deep');
    },
  );

  it('refuses deep objects as well as deep arrays, and deep expressions in layers', () => {
    const deepObject = `{"version":8,"sources":{},"layers":[],"metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`;
    expect(reasonOf(() => checkStyleBody('mapbox', deepObject))).toBe('json_too_deep');
    const filter = `${'["!",'.repeat(10_000)}true${']'.repeat(10_000)}`;
    const style = `{"version":8,"sources":{"s":{"type":"geojson","data":{"type":"FeatureCollection","features":[]}}},"layers":[{"id":"l","type":"circle","source":"s","filter":${filter}}]}`;
    expect(reasonOf(() => checkStyleBody('mapbox', style))).toBe('json_too_deep');
  });

  it('walks wide arrays (hundreds of thousands of elements) without exhausting the stack', () => {
    const wide = `{"version":8,"sources":{},"layers":[],"metadata":{"a":[${Array.from({ length: 200_000 }, () => '"asset:x"').join(',')}]}}`;
    expect(reasonOf(() => checkStyleBody('mapbox', wide))).toBe('style_too_large');
    const fits = `{"version":8,"sources":{},"layers":[],"metadata":{"a":[${Array.from({ length: 100_000 }, () => '0').join(',')}]}}`;
    expect(checkStyleBody('mapbox', fits).assets).toEqual([]);
  });

  it('refuses a style whose stored text outgrows the limit although the request did not', () => {
    const inflated = `{"version":8,"sources":{},"layers":[],"metadata":{"a":[${Array.from({ length: 50_000 }, () => '1e20').join(',')}]}}`;
    expect(Buffer.byteLength(inflated)).toBeLessThan(256 * 1024);
    expect(reasonOf(() => checkStyleBody('mapbox', inflated))).toBe('style_too_large');
  });
});

describe('canonicalJson of tile matrix sets is depth-checked', () => {
  it('refuses nesting deeper than a definition can have', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(reasonOf(() => canonicalJson({ tileMatrices: deep }))).toBe('json_too_deep');
    expect(canonicalJson({ b: [1, { d: 2, c: 3 }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":3,"d":2}]}');
  });
});

describe("DynamoDB's item size refusal is the client's oversized input (400), never a 500", () => {
  const validation = Object.assign(new Error('Item size has exceeded the maximum allowed size'), {
    name: 'ValidationException',
    $metadata: { httpStatusCode: 400 },
  });
  const updateTooLarge = Object.assign(
    new Error('Item size to update has exceeded the maximum allowed size'),
    {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    },
  );
  const cancelled = Object.assign(new Error('Transaction cancelled, please refer cancellation reasons'), {
    name: 'TransactionCanceledException',
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: [
      { Code: 'None' },
      { Code: 'ValidationError', Message: 'Item size has exceeded the maximum allowed size' },
    ],
  });

  it.each([
    ['a ValidationException', validation],
    ['an update that would grow the item too large', updateTooLarge],
    ['a cancelled transaction whose reason says so', cancelled],
  ])('translates %s into a 400 item_too_large with the standard body', (_, error) => {
    expect(isItemTooLarge(error)).toBe(true);
    let thrown: unknown;
    try {
      translateStoreError(error);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    const { status, body } = toErrorResponse(thrown, 'req-1');
    expect(status).toBe(400);
    expect(body).toMatchObject({
      code: 400,
      message: 'Bad Request',
      reason: 'item_too_large',
      request_id: 'req-1',
    });
    expect(body.detail).toMatch(/400 KB/);
  });

  it('translates a refusal of nesting deeper than 32 levels into a 400 item_too_deep', () => {
    const nested = Object.assign(
      new Error(
        'Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit',
      ),
      {
        name: 'ValidationException',
        $metadata: { httpStatusCode: 400 },
      },
    );
    expect(isItemTooDeep(nested)).toBe(true);
    let thrown: unknown;
    try {
      translateStoreError(nested);
    } catch (e) {
      thrown = e;
    }
    expect(toErrorResponse(thrown, 'req-2')).toMatchObject({
      status: 400,
      body: { reason: 'item_too_deep' },
    });
  });

  it('leaves other validation errors and conflicts alone', () => {
    const other = Object.assign(new Error('One or more parameter values were invalid'), {
      name: 'ValidationException',
    });
    expect(isItemTooLarge(other)).toBe(false);
    expect(isItemTooDeep(other)).toBe(false);
    expect(() => translateStoreError(other)).toThrow(other);
    const conflict = Object.assign(new Error('cancelled'), {
      name: 'TransactionCanceledException',
      CancellationReasons: [{ Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }],
    });
    expect(isItemTooLarge(conflict)).toBe(false);
  });
});
