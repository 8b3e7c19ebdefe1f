/**
 * The code page of a shapefile's text (ADR 0125). It is taken from the first of: the import plan's
 * `encoding`, the zip's .cpg file, the .dbf's language driver byte (LDID, header byte 29), and
 * UTF-8 if the text is valid UTF-8. If none of them gives a page GeoPlane can decode, the text is
 * refused with a message that names the way out.
 */
import { ImportInputError } from '#domain/import-sources.ts';

/**
 * The Windows code page each LDID stands for. These are GDAL's values (`ConvertCodePage` in its
 * Shapefile driver), plus 0x7D, 0x7E and 0x98 from Microsoft's "Code Pages Supported by Visual
 * FoxPro". 0x57 means "the writer's ANSI page": GDAL reads it as ISO-8859-1 and writes it by
 * default. Here it is 1252, whose WHATWG decoder is also what every ISO-8859-1 label gets.
 */
export const LDID_CODE_PAGES: ReadonlyMap<number, number> = new Map([
  [0x01, 437],
  [0x02, 850],
  [0x03, 1252],
  [0x04, 10000],
  [0x08, 865],
  [0x0a, 850],
  [0x0b, 437],
  [0x0d, 437],
  [0x0e, 850],
  [0x0f, 437],
  [0x10, 850],
  [0x11, 437],
  [0x12, 850],
  [0x13, 932],
  [0x14, 850],
  [0x15, 437],
  [0x16, 850],
  [0x17, 865],
  [0x18, 437],
  [0x19, 437],
  [0x1a, 850],
  [0x1b, 437],
  [0x1c, 863],
  [0x1d, 850],
  [0x1f, 852],
  [0x22, 852],
  [0x23, 852],
  [0x24, 860],
  [0x25, 850],
  [0x26, 866],
  [0x37, 850],
  [0x40, 852],
  [0x4d, 936],
  [0x4e, 949],
  [0x4f, 950],
  [0x50, 874],
  [0x57, 1252],
  [0x58, 1252],
  [0x59, 1252],
  [0x64, 852],
  [0x65, 866],
  [0x66, 865],
  [0x67, 861],
  [0x68, 895],
  [0x69, 620],
  [0x6a, 737],
  [0x6b, 857],
  [0x6c, 863],
  [0x78, 950],
  [0x79, 949],
  [0x7a, 936],
  [0x7b, 932],
  [0x7c, 874],
  [0x7d, 1255],
  [0x7e, 1256],
  [0x86, 737],
  [0x87, 852],
  [0x88, 857],
  [0x96, 10007],
  [0x97, 10029],
  [0x98, 10006],
  [0xc8, 1250],
  [0xc9, 1251],
  [0xca, 1254],
  [0xcb, 1253],
  [0xcc, 1257],
]);

/**
 * The code pages whose WHATWG decoder is that page. Node's TextDecoder checks these labels, and
 * the `shapefile` reader's decoder decodes the values. The DOS pages (437, 850, 852…) and the old
 * Mac pages have no WHATWG decoder, so they are missing here.
 */
const DECODABLE: ReadonlyMap<number, string> = new Map([
  [874, 'windows-874'],
  [866, 'ibm866'],
  [932, 'shift_jis'],
  [936, 'gbk'],
  [949, 'euc-kr'],
  [950, 'big5'],
  [1250, 'windows-1250'],
  [1251, 'windows-1251'],
  [1252, 'windows-1252'],
  [1253, 'windows-1253'],
  [1254, 'windows-1254'],
  [1255, 'windows-1255'],
  [1256, 'windows-1256'],
  [1257, 'windows-1257'],
  [1258, 'windows-1258'],
  [65001, 'utf-8'],
]);

/** A code page something named: its TextDecoder label (undefined: GeoPlane has no decoder for it). */
export interface NamedCodePage {
  /** The page as messages name it ("code page 1252", "UTF-8", "iso-8859-2"). */
  name: string;
  label: string | undefined;
}

/** Where a layer's code page came from, as messages say it ("the .cpg file"). */
export type CodePageSource = string;

/** An LDID as messages write it: 0x57. */
export const ldidText = (ldid: number): string => `0x${ldid.toString(16).padStart(2, '0').toUpperCase()}`;

const ofNumber = (page: number): NamedCodePage =>
  page === 65001
    ? { name: 'UTF-8', label: 'utf-8' }
    : { name: `code page ${page}`, label: DECODABLE.get(page) };

/** The code page an LDID stands for; undefined for 0x00 (none given) and unknown values. */
export const codePageOfLdid = (ldid: number): NamedCodePage | undefined => {
  const page = LDID_CODE_PAGES.get(ldid);
  return page === undefined ? undefined : ofNumber(page);
};

/**
 * The code page a .cpg file or the plan names ("UTF-8", "1252", "CP1251", "windows-1250",
 * "ISO-8859-2", "88591", "65001", "866", "437"); undefined when the name means nothing known.
 */
export const codePageOfName = (raw: string): NamedCodePage | undefined => {
  const lower = raw.trim().toLowerCase();
  const iso = /^8859[-_]?(\d{1,2})$/.exec(lower);
  const numbered = iso ? null : /^(?:cp|windows|win|ibm|ms|dos)?[-_ ]?(\d{3,5})$/.exec(lower);
  if (numbered) return ofNumber(Number(numbered[1]));
  const label = iso ? `iso-8859-${iso[1]}` : lower;
  if (!label) return undefined;
  try {
    const encoding = new TextDecoder(label).encoding;
    return { name: encoding === 'utf-8' ? 'UTF-8' : encoding, label: encoding };
  } catch {
    return undefined;
  }
};

/** The way out every refusal names. */
const WAY_OUT =
  'set `encoding` for this layer in the import plan (for example "1252", "1250", "1251" or "UTF-8"), or add a .cpg file naming the code page next to the .dbf';

/** How a layer's text is to be read: a decodable page, or a check still to run over the records. */
export type CodePageChoice =
  /** Decode with `label`. */
  | { kind: 'decode'; label: string; name: string; from: CodePageSource }
  /** A page GeoPlane can't decode: readable only when every byte is ASCII. */
  | { kind: 'ascii'; name: string; from: CodePageSource }
  /** Nothing names a page: readable when the text is valid UTF-8. */
  | { kind: 'utf-8'; ldid: number };

/**
 * The code page of a layer from, in order, the plan's `encoding`, the .cpg's text and the .dbf's
 * LDID. A name that means nothing known is an ImportInputError ('encoding_unknown').
 */
export function chooseCodePage(given: { plan?: string; cpg?: string; ldid: number }): CodePageChoice {
  const named = (raw: string, from: CodePageSource): CodePageChoice => {
    const page = codePageOfName(raw);
    if (!page) {
      const what = from === 'the import plan' ? 'The import plan' : 'The .cpg file';
      throw new ImportInputError(
        'encoding_unknown',
        `${what} names the encoding "${raw.trim().slice(0, 40)}", which GeoPlane does not know. To read the layer, ${WAY_OUT}.`,
      );
    }
    return page.label
      ? { kind: 'decode', label: page.label, name: page.name, from }
      : { kind: 'ascii', name: page.name, from };
  };
  if (given.plan !== undefined && given.plan.trim() !== '') return named(given.plan, 'the import plan');
  if (given.cpg !== undefined && given.cpg.trim() !== '') return named(given.cpg, 'the .cpg file');
  const page = codePageOfLdid(given.ldid);
  if (!page) return { kind: 'utf-8', ldid: given.ldid };
  const from: CodePageSource = `the .dbf's language driver byte (LDID ${ldidText(given.ldid)})`;
  return page.label
    ? { kind: 'decode', label: page.label, name: page.name, from }
    : { kind: 'ascii', name: page.name, from };
}

/** The refusal of text that isn't UTF-8 when nothing names its code page. */
export const notUtf8Error = (layer: string, feature: number, ldid: number): ImportInputError =>
  new ImportInputError(
    'encoding_unknown',
    `The attributes of feature ${feature} of shapefile '${layer}' are not UTF-8, and nothing names their code page: the zip has no .cpg file and the .dbf's language driver byte (LDID) is ${ldidText(ldid)}${ldid === 0 ? ' (none)' : ', a value GeoPlane does not know'}. To read them, ${WAY_OUT}.`,
  );

/** The refusal of non-ASCII text in a code page GeoPlane has no decoder for. */
export const undecodableError = (
  layer: string,
  feature: number,
  choice: Extract<CodePageChoice, { kind: 'ascii' }>,
): ImportInputError =>
  new ImportInputError(
    'encoding_unsupported',
    `The attributes of shapefile '${layer}' are in ${choice.name} (from ${choice.from}), which GeoPlane cannot decode, and feature ${feature} has text beyond ASCII. GeoPlane decodes UTF-8, the Windows code pages 874 and 1250–1258, 866 and the ISO-8859 pages, Shift_JIS, GBK, EUC-KR and Big5. Save the shapefile as UTF-8 (for example with ogr2ogr -lco ENCODING=UTF-8), or, if the text is in another code page, ${WAY_OUT}.`,
  );
