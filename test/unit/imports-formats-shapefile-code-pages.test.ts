/**
 * The code page of a shapefile's text (ADR 0125): the plan's `encoding`, the .cpg, the .dbf's
 * LDID byte, UTF-8 — and the refusal that names the way out. GDAL-written files are tested end to
 * end in test/e2e/import-shapefile-code-pages.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures } from '#datasources/imports/formats/index.ts';
import {
  chooseCodePage,
  codePageOfLdid,
  codePageOfName,
  LDID_CODE_PAGES,
  notUtf8Error,
} from '#datasources/imports/formats/shapefile-code-pages.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { collect, expectInputError, tempDir } from '../fixtures/imports/support.ts';
import { type ZipEntrySpec, zipOf } from '../fixtures/imports/zip-writer.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const SHP = join(import.meta.dirname, '../fixtures/imports/shp');

/**
 * A fixture layer as zip entries without its .cpg, its .dbf's LDID (byte 29) set to `ldid` and
 * `patch` applied to the .dbf's bytes.
 */
function layerWithLdid(layer: string, ldid: number, patch: (dbf: Buffer) => void = () => {}): ZipEntrySpec[] {
  return ['shp', 'shx', 'dbf', 'prj'].map((ext) => {
    const data = readFileSync(join(SHP, `${layer}.${ext}`));
    if (ext === 'dbf') {
      data[29] = ldid;
      patch(data);
    }
    return { name: `${layer}.${ext}`, data };
  });
}

/** latin.dbf (no .cpg) with its LDID set: 'Zürich', 'Genève' in ISO-8859-1 bytes. */
const latinZip = (ldid: number, patch?: (dbf: Buffer) => void) =>
  tmp.file(`latin-${ldid}.zip`, zipOf(layerWithLdid('latin', ldid, patch)));

const cities = async (path: string, encoding?: string) =>
  (await collect(readFeatures(path, 'latin.zip', 'latin', encoding === undefined ? {} : { encoding }))).map(
    (f) => f.properties.city,
  );

describe('the LDID table', () => {
  it('maps the common LDIDs to their code pages (GDAL and Visual FoxPro values)', () => {
    const expected: [number, string, string | undefined][] = [
      [0x57, 'code page 1252', 'windows-1252'],
      [0x03, 'code page 1252', 'windows-1252'],
      [0x58, 'code page 1252', 'windows-1252'],
      [0x01, 'code page 437', undefined],
      [0x02, 'code page 850', undefined],
      [0x64, 'code page 852', undefined],
      [0x65, 'code page 866', 'ibm866'],
      [0x26, 'code page 866', 'ibm866'],
      [0x13, 'code page 932', 'shift_jis'],
      [0x7b, 'code page 932', 'shift_jis'],
      [0x4d, 'code page 936', 'gbk'],
      [0x4e, 'code page 949', 'euc-kr'],
      [0x4f, 'code page 950', 'big5'],
      [0x50, 'code page 874', 'windows-874'],
      [0x7d, 'code page 1255', 'windows-1255'],
      [0x7e, 'code page 1256', 'windows-1256'],
      [0xc8, 'code page 1250', 'windows-1250'],
      [0xc9, 'code page 1251', 'windows-1251'],
      [0xca, 'code page 1254', 'windows-1254'],
      [0xcb, 'code page 1253', 'windows-1253'],
      [0xcc, 'code page 1257', 'windows-1257'],
    ];
    for (const [ldid, name, label] of expected) {
      expect(codePageOfLdid(ldid), `LDID ${ldid}`).toEqual({ name, label });
    }
    expect(codePageOfLdid(0x00)).toBeUndefined();
    expect(codePageOfLdid(0xff)).toBeUndefined();
  });

  it('gives only labels TextDecoder takes as they are', () => {
    for (const ldid of LDID_CODE_PAGES.keys()) {
      const label = codePageOfLdid(ldid)?.label;
      if (label) expect(new TextDecoder(label).encoding, `LDID ${ldid}`).toBe(label);
    }
  });
});

describe('code page names (.cpg and the plan)', () => {
  it('reads the names .cpg files and users write', () => {
    const label = (name: string) => codePageOfName(name)?.label;
    expect(['UTF-8', 'utf8', '65001', ' UTF-8\r\n'].map(label)).toEqual(Array(4).fill('utf-8'));
    expect(['1252', 'CP1252', 'cp-1252', 'windows-1252', 'ISO-8859-1', '88591', 'latin1'].map(label)).toEqual(
      Array(7).fill('windows-1252'),
    );
    expect(['1250', 'CP1250', 'Windows-1250'].map(label)).toEqual(Array(3).fill('windows-1250'));
    expect(label('CP1251')).toBe('windows-1251');
    expect(label('8859-2')).toBe('iso-8859-2');
    expect(label('885915')).toBe('iso-8859-15');
    expect(label('866')).toBe('ibm866');
    expect(label('Big5')).toBe('big5');
    expect(codePageOfName('437')).toEqual({ name: 'code page 437', label: undefined });
    expect(codePageOfName('CP850')).toEqual({ name: 'code page 850', label: undefined });
    expect(codePageOfName('klingon')).toBeUndefined();
    expect(codePageOfName('')).toBeUndefined();
  });

  it('takes the plan over the .cpg over the LDID; nothing named means "UTF-8 if valid"', () => {
    expect(chooseCodePage({ plan: '1251', cpg: 'UTF-8', ldid: 0x57 })).toMatchObject({
      kind: 'decode',
      label: 'windows-1251',
      from: 'the import plan',
    });
    expect(chooseCodePage({ cpg: 'CP1250', ldid: 0x57 })).toMatchObject({
      label: 'windows-1250',
      from: 'the .cpg file',
    });
    expect(chooseCodePage({ cpg: '  ', ldid: 0xc9 })).toMatchObject({
      label: 'windows-1251',
      from: "the .dbf's language driver byte (LDID 0xC9)",
    });
    expect(chooseCodePage({ ldid: 0x01 })).toEqual({
      kind: 'ascii',
      name: 'code page 437',
      from: "the .dbf's language driver byte (LDID 0x01)",
    });
    expect(chooseCodePage({ ldid: 0x00 })).toEqual({ kind: 'utf-8', ldid: 0 });
    expect(chooseCodePage({ ldid: 0x42 })).toEqual({ kind: 'utf-8', ldid: 0x42 });
  });

  it('refuses a name it does not know, saying where it came from and the way out', () => {
    const fromPlan = (() => {
      try {
        chooseCodePage({ plan: 'klingon', ldid: 0x57 });
      } catch (error) {
        return error;
      }
    })() as ImportInputError;
    expect(fromPlan).toBeInstanceOf(ImportInputError);
    expect(fromPlan.code).toBe('encoding_unknown');
    expect(fromPlan.message).toMatch(
      /^The import plan names the encoding "klingon", which GeoPlane does not know/,
    );
    expect(() => chooseCodePage({ cpg: 'EBCDIC-XYZ', ldid: 0 })).toThrow(
      /The \.cpg file names the encoding "EBCDIC-XYZ".*set `encoding` for this layer in the import plan/,
    );
  });
});

describe('the refusal message', () => {
  it('names the layer, the feature, the LDID seen and the way out (`encoding` in the plan, or a .cpg)', () => {
    const error = notUtf8Error('towns', 7, 0);
    expect(error.code).toBe('encoding_unknown');
    expect(error.message).toBe(
      'The attributes of feature 7 of shapefile \'towns\' are not UTF-8, and nothing names their code page: the zip has no .cpg file and the .dbf\'s language driver byte (LDID) is 0x00 (none). To read them, set `encoding` for this layer in the import plan (for example "1252", "1250", "1251" or "UTF-8"), or add a .cpg file naming the code page next to the .dbf.',
    );
    expect(notUtf8Error('towns', 0, 0x42).message).toMatch(
      /LDID\) is 0x42, a value GeoPlane does not know\./,
    );
  });
});

describe('reading with the LDID', () => {
  it('decodes by the LDID when there is no .cpg (0x57 as 1252, 0xC9 as 1251: the byte decides)', async () => {
    expect(await cities(latinZip(0x57))).toEqual(['Zürich', 'Genève']);
    expect(await cities(latinZip(0x03))).toEqual(['Zürich', 'Genève']);
    // The same bytes under LDID 0xC9 are Cyrillic: ü (0xFC) is ь, è (0xE8) is и.
    expect(await cities(latinZip(0xc9))).toEqual(['Zьrich', 'Genиve']);
  });

  it('decodes 1252 bytes 0x80–0x9F as 1252 in values and in field names alike (Node 20 one-shot decoding does not)', async () => {
    const path = latinZip(0x57, (dbf) => {
      dbf.write('Œuvr', 32, 'latin1');
      dbf[32] = 0x8c; // Œ
      dbf[0x43] = 0x80; // the ü of Zürich → €
      dbf[0x99] = 0x9f; // the space after Genève → Ÿ
    });
    const discovery = await discover(path, 'latin.zip');
    expect(discovery.layers[0]?.fields).toEqual([{ name: 'Œuvr', type: 'text' }]);
    const features = await collect(readFeatures(path, 'latin.zip', 'latin'));
    expect(features.map((f) => f.properties)).toEqual([{ Œuvr: 'Z€rich' }, { Œuvr: 'GenèveŸ' }]);
  });

  it('reads a page it has no decoder for when the text is ASCII, and refuses it otherwise, naming page and LDID', async () => {
    const wells = tmp.file('wells-437.zip', zipOf(layerWithLdid('wells', 0x01)));
    expect(await collect(readFeatures(wells, 'wells.zip', 'wells'))).toHaveLength(2);
    const latin = latinZip(0x01);
    const discovery = await discover(latin, 'latin.zip');
    expect(discovery.warnings.join('\n')).toMatch(/code page 437 \(from .*LDID 0x01\)/);
    await expectInputError(
      () => cities(latin),
      'encoding_unsupported',
      /'latin' are in code page 437 \(from the \.dbf's language driver byte \(LDID 0x01\)\), which GeoPlane cannot decode, and feature 0 has text beyond ASCII.*`encoding`/,
    );
  });

  it('takes the plan `encoding` over an LDID of none, over the LDID and over the .cpg', async () => {
    expect(await cities(latinZip(0x00), '1252')).toEqual(['Zürich', 'Genève']);
    expect(await cities(latinZip(0x57), 'CP1251')).toEqual(['Zьrich', 'Genиve']);
    const withCpg = tmp.file(
      'latin-cpg.zip',
      zipOf(
        ['shp', 'shx', 'dbf', 'prj', 'cpg'].map((ext) => ({
          name: `latin.${ext}`,
          data: readFileSync(join(SHP, `latin.${ext}`)),
        })),
      ),
    );
    expect(await cities(withCpg, 'windows-1251')).toEqual(['Zьrich', 'Genиve']);
    await expectInputError(
      () => cities(withCpg, 'klingon'),
      'encoding_unknown',
      /import plan names the encoding "klingon"/,
    );
  });

  it('reads valid UTF-8 when nothing names a page', async () => {
    const path = latinZip(0x00, (dbf) => {
      dbf.write('Zü', 0x42, 'utf8'); // "Z", 0xC3 0xBC over "Zü": Zürich in UTF-8 minus one byte
      dbf.write('ric ', 0x45, 'latin1');
      dbf.write('Gen', 0x93, 'latin1');
      dbf.write('e', 0x96, 'latin1');
    });
    expect(await cities(path)).toEqual(['Züric', 'Geneve']);
  });
});
