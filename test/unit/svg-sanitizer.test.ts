import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#domain/errors.ts';
import { checkSvg } from '#domain/style-assets.ts';

// ADR 0074: the SVG sanitizer refuses script and data: URLs in any attribute after entity
// decoding, whatever the casing, and SMIL animations that would set a link or a handler.
const svg = (inner: string) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="8" height="8">${inner}</svg>`,
  );

function reasonOf(bytes: Buffer): string | undefined {
  try {
    checkSvg(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as InvalidInputError).reason;
  }
  return undefined;
}

describe('SVG sanitizer: SMIL animations', () => {
  it.each([
    ['<set> of href to javascript:', '<a><set attributeName="href" to="javascript:alert(1)"/></a>'],
    [
      '<set> of href to a harmless-looking value',
      '<a><set attributeName="href" to="https://evil.example/"/></a>',
    ],
    ['<set> of xlink:href', '<a><set attributeName="xlink:href" to="javascript:alert(1)"/></a>'],
    ['<set> of HREF in upper case', '<a><set attributeName="HREF" to="javascript:alert(1)"/></a>'],
    ['<set> of an entity-encoded href', '<a><set attributeName="&#104;ref" to="#x"/></a>'],
    ['<set> of " href " with spaces', '<a><set attributeName=" href " to="#x"/></a>'],
    [
      '<animate> of href with values',
      '<a><animate attributeName="href" values="#a;javascript:alert(1)"/></a>',
    ],
    ['<animate> of an event handler', '<rect><animate attributeName="onclick" to="alert(1)"/></rect>'],
    ['<animateMotion> of href', '<a><animateMotion attributeName="href" to="javascript:alert(1)"/></a>'],
    [
      '<animateTransform> of xlink:href',
      '<a><animateTransform attributeName="xlink:href" from="#a" to="data:text/html,x"/></a>',
    ],
    [
      '<svg:set> with a prefix',
      '<a><svg:set xmlns:svg="http://www.w3.org/2000/svg" attributeName="href" to="#x"/></a>',
    ],
    ['<set> of xml:base', '<g><set attributeName="xml:base" to="https://evil.example/"/></g>'],
    ['<set> of src', '<g><set attributeName="src" to="https://evil.example/x.js"/></g>'],
  ])('refuses %s', (_what, inner) => {
    expect(reasonOf(svg(inner))).toBe('unsafe_svg');
  });

  it.each([
    [
      'an opacity animation',
      '<rect width="4" height="4"><animate attributeName="opacity" values="0;1" dur="1s"/></rect>',
    ],
    [
      'a transform animation',
      '<g><animateTransform attributeName="transform" type="rotate" from="0" to="360"/></g>',
    ],
    ['a fill set to an internal gradient', '<rect><set attributeName="fill" to="url(#g)"/></rect>'],
    [
      'a motion along an internal path',
      '<circle r="1"><animateMotion dur="2s"><mpath href="#p"/></animateMotion></circle>',
    ],
  ])('accepts %s', (_what, inner) => {
    expect(reasonOf(svg(inner))).toBeUndefined();
  });
});

describe('SVG sanitizer: script and data: URLs in any attribute', () => {
  it.each([
    ['javascript: in a plain attribute', '<rect fill="javascript:alert(1)"/>'],
    ['JaVaScRiPt: in mixed case', '<a href="#x"><rect class="JaVaScRiPt:alert(1)"/></a>'],
    ['a decimal character reference', '<a href="&#106;avascript:alert(1)"/>'],
    ['a hex character reference', '<a xlink:href="&#x6A;avascript:alert(1)"/>'],
    ['an upper-case X hex reference', '<rect fill="&#X6A;avascript:alert(1)"/>'],
    ['leading zeros in the reference', '<rect fill="&#0000106;avascript:alert(1)"/>'],
    ['a tab inside the scheme', '<rect fill="java&#9;script:alert(1)"/>'],
    ['a newline inside the scheme', '<rect fill="java&#10;script:alert(1)"/>'],
    ['a carriage return inside the scheme', '<rect fill="java&#13;script:alert(1)"/>'],
    ['an encoded colon', '<rect fill="javascript&#58;alert(1)"/>'],
    ['an HTML-only entity', '<rect fill="javascript&colon;alert(1)"/>'],
    ['vbscript:', '<rect fill="vbscript:msgbox(1)"/>'],
    ['a data: URL in values', '<rect><animate attributeName="fill" values="red;data:text/html,x"/></rect>'],
    ['a data: URL in to', '<rect><set attributeName="fill" to=" DATA:text/html,x"/></rect>'],
    ['javascript: after a prefix', '<rect><set attributeName="class" to="x;javascript:alert(1)"/></rect>'],
    ['<a href> to javascript:', '<a href="javascript:alert(1)"><rect/></a>'],
    ['<a href> to data:', '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="/>'],
    ['<use href> to data:', '<use href="data:image/svg+xml;base64,PHN2Zy8+#x"/>'],
    ['<image href> to data:', '<image href="data:image/png;base64,AAAA"/>'],
    ['<image xlink:href> to another site', '<image xlink:href="https://evil.example/x.png"/>'],
    ['an entity-encoded external href', '<use href="&#104;ttps://evil.example/x.svg#a"/>'],
    ['xml:base', '<g xml:base="https://evil.example/"><use href="#a"/></g>'],
  ])('refuses %s', (_what, inner) => {
    expect(reasonOf(svg(inner))).toBe('unsafe_svg');
  });
});

describe('SVG sanitizer: CSS', () => {
  it.each([
    ['url(javascript:) in style', '<rect style="fill:url(javascript:alert(1))"/>'],
    ['url(data:) in a presentation attribute', '<rect fill="url(data:image/svg+xml,x)"/>'],
    ['an entity-encoded url(', '<rect fill="u&#114;l(https://evil.example/x)"/>'],
    ['a CSS-escaped url(', '<rect style="fill:u\\72 l(https://evil.example/x)"/>'],
    ['a CSS-escaped @import', '<style>@\\69mport "https://evil.example/x.css";</style>'],
    ['url() in <style> behind an entity', '<style>rect{fill:u&#114;l(https://evil.example/x)}</style>'],
    ['url() in CDATA', '<style><![CDATA[rect{fill:url(javascript:alert(1))}]]></style>'],
    ['image-set()', '<rect style="background:image-set(&quot;https://evil.example/x.png&quot; 1x)"/>'],
    ['expression()', '<rect style="width:expression(alert(1))"/>'],
  ])('refuses %s', (_what, inner) => {
    expect(reasonOf(svg(inner))).toBe('unsafe_svg');
  });
});

describe('SVG sanitizer: what was refused before stays refused', () => {
  it.each([
    ['<script>', '<script>alert(1)</script>'],
    ['<SCRIPT> in upper case', '<SCRIPT/>'],
    ['a namespaced script', '<h:script xmlns:h="http://www.w3.org/1999/xhtml"/>'],
    ['<foreignObject>', '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml"/></foreignObject>'],
    ['an onload handler', '<rect onload="alert(1)"/>'],
    ['an ONCLICK handler', '<rect ONCLICK="alert(1)"/>'],
    ['a namespaced handler', '<rect xlink:onclick="alert(1)"/>'],
    ['a SMIL onbegin handler', '<rect><animate attributeName="opacity" onbegin="alert(1)"/></rect>'],
    ['an <iframe>', '<iframe/>'],
    [
      'an XHTML meta refresh',
      '<h:meta xmlns:h="http://www.w3.org/1999/xhtml" http-equiv="refresh" content="0;url=https://evil.example"/>',
    ],
  ])('refuses %s', (_what, inner) => {
    expect(reasonOf(svg(inner))).toBe('unsafe_svg');
  });

  it('accepts an icon with internal references, entities and a gradient', () => {
    const icon = svg(
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient><circle id="c" r="3"/></defs>' +
        '<title>Caf&#233; &amp; bar</title><use xlink:href="#c" style="fill:url(#g)"/><a href="#c"><text>metadata: x</text></a>' +
        '<style>circle { fill: url("#g"); }</style>',
    );
    expect(reasonOf(icon)).toBeUndefined();
  });
});
