import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '#domain/errors.ts';
import { sniffContentType } from '#domain/style-assets.ts';
import { checkStyleBody, loadStyleValidator } from '#domain/styles.ts';

// Mapbox bodies are checked by the MapLibre validator, loaded on first use (ADR 0100).
beforeAll(async () => {
  await loadStyleValidator();
});

const sld = (inner: string, version = '1.0.0') =>
  `<sld:StyledLayerDescriptor version="${version}" xmlns:sld="http://www.opengis.net/sld" xmlns:xlink="http://www.w3.org/1999/xlink">${inner}</sld:StyledLayerDescriptor>`;

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as InvalidInputError).reason;
  }
  return undefined;
}

describe('checkStyleBody', () => {
  it('extracts asset references from SLD OnlineResource hrefs, with or without //, sorted and unique', () => {
    const body = sld(
      '<se:OnlineResource xmlns:se="x" xlink:href="asset://b"/><OnlineResource xlink:href="asset:a"/><OnlineResource xlink:href="asset:a"/><OnlineResource xlink:href="https://example.com/x.png"/>',
    );
    expect(checkStyleBody('sld_1.0.0', body).assets).toEqual(['a', 'b']);
  });

  it('extracts Mapbox sprite, icon-image and references inside expressions', () => {
    const style = {
      version: 8,
      sprite: 'asset:sprite',
      sources: { s: { type: 'geojson', data: { type: 'FeatureCollection', features: [] } } },
      layers: [
        {
          id: 'poi',
          type: 'symbol',
          source: 's',
          layout: { 'icon-image': ['case', ['==', ['get', 'kind'], 'bar'], 'asset:beer', 'asset:pin'] },
        },
        { id: 'fill', type: 'fill', source: 's', paint: { 'fill-pattern': 'asset:hatch' } },
      ],
    };
    expect(checkStyleBody('mapbox', style).assets).toEqual(['beer', 'hatch', 'pin', 'sprite']);
    expect(checkStyleBody('mapbox', JSON.stringify(style)).text).toBe(JSON.stringify(style));
  });

  it('accepts only the root and version each XML format names', () => {
    expect(reasonOf(() => checkStyleBody('sld_1.0.0', sld('')))).toBeUndefined();
    expect(reasonOf(() => checkStyleBody('sld_1.1.0', sld('', '1.1.0')))).toBeUndefined();
    expect(reasonOf(() => checkStyleBody('sld_1.1.0', sld('')))).toBe('invalid_style');
    expect(reasonOf(() => checkStyleBody('se_1.1.0', '<se:FeatureTypeStyle xmlns:se="x"/>'))).toBeUndefined();
    expect(reasonOf(() => checkStyleBody('se_1.1.0', sld('', '1.1.0')))).toBe('invalid_style');
    expect(reasonOf(() => checkStyleBody('sld_1.0.0', '<a/><b/>'))).toBe('malformed_xml');
    expect(reasonOf(() => checkStyleBody('sld_1.0.0', 'not xml'))).toBe('malformed_xml');
  });

  it('refuses bad asset names, more than 20 assets, and MapLibre-invalid styles', () => {
    expect(
      reasonOf(() => checkStyleBody('mapbox', { version: 8, sources: {}, layers: [], sprite: 'asset:a b' })),
    ).toBe('invalid_asset_reference');
    const many = sld(
      Array.from({ length: 21 }, (_, i) => `<OnlineResource xlink:href="asset:a${i}"/>`).join(''),
    );
    expect(reasonOf(() => checkStyleBody('sld_1.0.0', many))).toBe('invalid_style');
    expect(
      reasonOf(() =>
        checkStyleBody('mapbox', { version: 8, sources: {}, layers: [{ id: 'x', type: 'nope' }] }),
      ),
    ).toBe('invalid_style');
    expect(reasonOf(() => checkStyleBody('mapbox', '[1]'))).toBe('invalid_style');
  });
});

describe('sniffContentType', () => {
  it.each([
    ['PNG', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]), 'image/png'],
    ['JPEG', Buffer.from([0xff, 0xd8, 0xff, 0xdb]), 'image/jpeg'],
    ['GIF87a', Buffer.from('GIF87a...'), 'image/gif'],
    [
      'SVG with a BOM and leading space',
      Buffer.from('\uFEFF  <svg xmlns="http://www.w3.org/2000/svg"/>'),
      'image/svg+xml',
    ],
    [
      'SVG with internal references',
      Buffer.from('<svg><use href="#a"/><rect fill="url(#g)"/></svg>'),
      'image/svg+xml',
    ],
  ])('recognises %s', (_what, bytes, type) => {
    expect(sniffContentType(bytes)).toBe(type);
  });

  it.each([
    ['a truncated PNG signature', Buffer.from([0x89, 0x50, 0x4e]), 'unsupported_asset_type'],
    ['BMP', Buffer.from('BM\0\0\0\0'), 'unsupported_asset_type'],
    ['non-UTF-8 text starting with <', Buffer.from([0x3c, 0xff, 0xfe]), 'unsupported_asset_type'],
    ['xlink:href to another site', Buffer.from('<svg><a xlink:href="https://x"/></svg>'), 'unsafe_svg'],
    ['an upper-case SCRIPT', Buffer.from('<svg><SCRIPT/></svg>'), 'unsafe_svg'],
    ['a namespaced script', Buffer.from('<svg xmlns:h="x"><h:script/></svg>'), 'unsafe_svg'],
    ['onclick on a child', Buffer.from('<svg><g onclick="x"/></svg>'), 'unsafe_svg'],
    ['an entity declaration', Buffer.from('<!ENTITY x "y"><svg/>'), 'xml_dtd_refused'],
  ])('refuses %s', (_what, bytes, reason) => {
    expect(reasonOf(() => sniffContentType(bytes))).toBe(reason);
  });
});
