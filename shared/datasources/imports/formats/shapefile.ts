/**
 * Zipped shapefiles: each .shp in the zip is a layer. The layer's files are extracted safely to a
 * temp dir (removed afterwards, also when iteration stops early) and streamed with `shapefile`.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { mkdtemp, open as openFile, readFile, rm, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import * as shapefile from 'shapefile';
import type { Entry } from 'yauzl';
import type {
  Discovery,
  FieldType,
  SourceFeature,
  SourceField,
  SourceGeometry,
} from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { asInputError } from './errors.ts';
import { type ImportLimits, limitsOf } from './limits.ts';
import { sridOfPrj } from './prj.ts';
import { geometryInfo, LayerScan } from './scan.ts';
import { chooseCodePage, notUtf8Error, undecodableError } from './shapefile-code-pages.ts';
import { scratchDir } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';
import { extractEntry, type OpenZip, openZip } from './zip.ts';

/** The entries of one shapefile layer in the zip. */
interface ShapefileEntries {
  name: string;
  shp: Entry;
  shx?: Entry;
  dbf?: Entry;
  prj?: Entry;
  cpg?: Entry;
}

/** A layer extracted to a temp dir. */
interface Extracted {
  name: string;
  shp: string;
  dbf: string;
  prj?: string;
  cpg?: string;
}

const SIDECARS = ['shx', 'dbf', 'prj', 'cpg'] as const;

/** The shapefile layers of a zip: one per .shp, named after its base name (its path when names repeat). */
const layersOf = (entries: Entry[]): ShapefileEntries[] => {
  const byStem = new Map<string, Entry>();
  for (const e of entries) byStem.set(e.fileName.toLowerCase(), e);
  const shps = entries.filter((e) => /\.shp$/i.test(e.fileName) && !e.fileName.startsWith('__MACOSX/'));
  const bases = shps.map((e) => posix.basename(e.fileName).replace(/\.shp$/i, ''));
  return shps.map((shp, i) => {
    const stem = shp.fileName.slice(0, -4);
    const base = bases[i] as string;
    const name = bases.indexOf(base) === bases.lastIndexOf(base) ? base : stem.replaceAll('/', '_');
    const layer: ShapefileEntries = { name, shp };
    for (const ext of SIDECARS) {
      const entry = byStem.get(`${stem}.${ext}`.toLowerCase());
      if (entry) layer[ext] = entry;
    }
    return layer;
  });
};

/** Extracts one layer's files (under fixed names) into a fresh temp dir; returns the dir and paths. */
async function extractLayer(
  zip: OpenZip,
  layer: ShapefileEntries,
  limits: ImportLimits,
  signal?: AbortSignal,
): Promise<{ dir: string; files: Extracted }> {
  if (!layer.dbf) {
    throw new ImportInputError(
      'missing_sidecar',
      `The shapefile '${layer.name}' in the zip has no .dbf file; zip the .shp together with its .shx, .dbf, .prj (and .cpg).`,
    );
  }
  const dir = await mkdtemp(join(scratchDir(), 'geoplane-shp-'));
  try {
    const files: Extracted = { name: layer.name, shp: join(dir, 'layer.shp'), dbf: join(dir, 'layer.dbf') };
    let inflated = await extractEntry(zip, layer.shp, files.shp, limits, 0, signal);
    inflated = await extractEntry(zip, layer.dbf, files.dbf, limits, inflated, signal);
    if (layer.prj) {
      files.prj = join(dir, 'layer.prj');
      inflated = await extractEntry(zip, layer.prj, files.prj, limits, inflated, signal);
    }
    if (layer.cpg) {
      files.cpg = join(dir, 'layer.cpg');
      await extractEntry(zip, layer.cpg, files.cpg, limits, inflated, signal);
    }
    return { dir, files };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The .dbf header: record count, LDID and fields (their names still bytes). */
interface DbfHeader {
  records: number;
  headerLength: number;
  recordLength: number;
  /** The language driver byte (header byte 29): the code page the writer recorded, 0 for none. */
  ldid: number;
  fields: { name: Uint8Array; type: string; length: number; decimals: number }[];
}

const readDbfHeader = async (path: string): Promise<DbfHeader> => {
  const handle = await openFile(path, 'r');
  try {
    const head = Buffer.alloc(32);
    await handle.read(head, 0, 32, 0);
    const headerLength = head.readUInt16LE(8);
    const body = Buffer.alloc(Math.max(headerLength - 32, 0));
    const { bytesRead } = await handle.read(body, 0, body.length, 32);
    const fields: DbfHeader['fields'] = [];
    for (let n = 0; n + 32 <= bytesRead && body[n] !== 0x0d; n += 32) {
      let end = 0;
      while (end < 11 && body[n + end] !== 0) end++;
      fields.push({
        name: body.subarray(n, n + end),
        type: String.fromCharCode(body[n + 11] as number),
        length: body[n + 16] as number,
        decimals: body[n + 17] as number,
      });
    }
    return {
      records: head.readUInt32LE(4),
      headerLength,
      recordLength: head.readUInt16LE(10),
      ldid: head[29] as number,
      fields,
    };
  } finally {
    await handle.close();
  }
};

/**
 * Decodes with Node's TextDecoder in streaming mode, then flushes: Node 20's one-shot decode of
 * windows-1252 takes a Latin-1 shortcut that gets 0x80–0x9F wrong (nodejs/node#60888); the
 * streaming path decodes by the WHATWG table, as the `shapefile` reader's decoder does.
 */
const decodeAll = (label: string, bytes: Uint8Array): string => {
  const decoder = new TextDecoder(label);
  return decoder.decode(bytes, { stream: true }) + decoder.decode();
};

const fieldType = (type: string, length: number, decimals: number): FieldType => {
  switch (type.toUpperCase()) {
    case 'N':
      if (decimals > 0) return 'double precision';
      return length <= 9 ? 'integer' : length <= 18 ? 'bigint' : 'double precision';
    case 'F':
      return 'double precision';
    case 'L':
      return 'boolean';
    case 'D':
      return 'date';
    default:
      return 'text';
  }
};

/**
 * The first record of the .dbf whose bytes fail `ok` (undefined: none does), read 1 MB at a time
 * so memory stays flat whatever the file size.
 */
async function firstRecordFailing(
  path: string,
  header: DbfHeader,
  ok: (record: Buffer) => boolean,
): Promise<number | undefined> {
  const size = Math.max(header.recordLength, 1);
  const handle = await openFile(path, 'r');
  try {
    const perRead = Math.max(1, Math.floor((1024 * 1024) / size));
    const buffer = Buffer.alloc(perRead * size);
    for (let record = 0; record < header.records; record += perRead) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, header.headerLength + record * size);
      const count = Math.min(Math.floor(bytesRead / size), header.records - record);
      for (let i = 0; i < count; i++) {
        if (!ok(buffer.subarray(i * size, (i + 1) * size))) return record + i;
      }
      if (count < perRead) break;
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * The TextDecoder label of a layer's text (ADR 0125): the plan's `encoding`, else the .cpg, else
 * the LDID, else UTF-8 when the text is valid UTF-8. A page GeoPlane has no decoder for is read
 * only when its text is all ASCII (the same bytes in every one of those pages).
 */
async function encodingOf(
  files: Extracted,
  header: DbfHeader,
  planEncoding: string | undefined,
): Promise<string> {
  const choice = chooseCodePage({
    ...(planEncoding !== undefined ? { plan: planEncoding } : {}),
    ...(files.cpg ? { cpg: await readFile(files.cpg, 'latin1') } : {}),
    ldid: header.ldid,
  });
  if (choice.kind === 'decode') return choice.label;
  if (choice.kind === 'ascii') {
    const bad = await firstRecordFailing(files.dbf, header, isAscii);
    if (bad !== undefined) throw undecodableError(files.name, bad, choice);
    return 'utf-8';
  }
  const bad = await firstRecordFailing(files.dbf, header, isUtf8);
  if (bad !== undefined) throw notUtf8Error(files.name, bad, choice.ldid);
  return 'utf-8';
}

/** Refuses a .shp shorter than its header says (a truncated upload). */
async function checkShpLength(path: string, layer: string): Promise<void> {
  const handle = await openFile(path, 'r');
  try {
    const head = Buffer.alloc(100);
    const { bytesRead } = await handle.read(head, 0, 100, 0);
    const size = (await handle.stat()).size;
    if (bytesRead < 100 || head.readInt32BE(0) !== 9994) {
      throw new ImportInputError(
        'invalid_shapefile',
        `The .shp file of '${layer}' is not a shapefile (bad header).`,
      );
    }
    const declared = head.readInt32BE(24) * 2;
    if (size < declared) {
      throw new ImportInputError(
        'truncated_file',
        `The .shp file of '${layer}' is truncated: ${size} bytes of the ${declared} its header declares.`,
      );
    }
  } finally {
    await handle.close();
  }
}

/** An opened layer: its encoding, dbf fields and SRID (from the .prj). */
interface OpenedLayer {
  encoding: string;
  records: number;
  /** The dbf's fields, names decoded. */
  dbfFields: { name: string; type: string; length: number; decimals: number }[];
  srid: number | null;
  /** Why the text can't be read (discovery only: reading refuses instead). */
  encodingWarning?: string;
  prjWarning?: string;
  fields: SourceField[];
}

/**
 * Opens an extracted layer. Reading (`read`) refuses text whose code page can't be told; discovery
 * only warns, so the import stops at a plan that can name the `encoding` rather than at a dead end.
 */
async function openLayer(
  files: Extracted,
  mode: { read: true; encoding?: string | undefined } | { read: false },
): Promise<OpenedLayer> {
  await checkShpLength(files.shp, files.name);
  const header = await readDbfHeader(files.dbf);
  let encoding = 'utf-8';
  let encodingWarning: string | undefined;
  try {
    encoding = await encodingOf(files, header, mode.read ? mode.encoding : undefined);
  } catch (error) {
    if (mode.read || !(error instanceof ImportInputError)) throw error;
    encodingWarning = error.message;
  }
  const dbfFields = header.fields.map((f) => ({ ...f, name: decodeAll(encoding, f.name) }));
  let srid: number | null = null;
  let prjWarning: string | undefined;
  if (files.prj) {
    srid = sridOfPrj(await readFile(files.prj, 'utf8'));
    if (srid === null)
      prjWarning = `The .prj of '${files.name}' names a CRS GeoPlane does not recognise; give source_srid in the import plan.`;
  } else {
    prjWarning = `The shapefile '${files.name}' has no .prj file, so its CRS is unknown; give source_srid in the import plan.`;
  }
  const fields = dbfFields.map((f) => ({ name: f.name, type: fieldType(f.type, f.length, f.decimals) }));
  return {
    encoding,
    records: header.records,
    dbfFields,
    srid,
    ...(encodingWarning ? { encodingWarning } : {}),
    ...(prjWarning ? { prjWarning } : {}),
    fields,
  };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The features of an extracted layer, after skipping `skip`; dates as YYYY-MM-DD. */
async function* layerFeatures(
  files: Extracted,
  opened: OpenedLayer,
  options: ReadOptions,
  zipSize: number,
): AsyncGenerator<{ index: number; feature: SourceFeature }> {
  const skip = options.skip ?? 0;
  const dates = opened.dbfFields.filter((f) => f.type === 'D').map((f) => f.name);
  let source: Awaited<ReturnType<typeof shapefile.open>>;
  try {
    source = await shapefile.open(files.shp, files.dbf, { encoding: opened.encoding });
  } catch (error) {
    throw asInputError(error, 'invalid_shapefile', `The shapefile '${files.name}' cannot be read`);
  }
  let index = 0;
  try {
    for (;;) {
      let next: { done: boolean; value: { properties: unknown; geometry: unknown } };
      try {
        next = await source.read();
      } catch (error) {
        throw asInputError(
          error,
          'invalid_shapefile',
          `Feature ${index} of shapefile '${files.name}' cannot be read`,
        );
      }
      if (next.done) break;
      if (index % 1000 === 0) {
        options.signal?.throwIfAborted();
        options.onBytes?.(Math.round((zipSize * index) / Math.max(opened.records, 1)));
      }
      if (index >= skip) {
        const properties = { ...(next.value.properties as Record<string, unknown>) };
        for (const name of dates) {
          const d = properties[name];
          properties[name] =
            d instanceof Date && !Number.isNaN(d.getTime())
              ? `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
              : null;
        }
        yield {
          index,
          feature: { properties, geometry: (next.value.geometry ?? null) as SourceGeometry | null },
        };
      }
      index++;
    }
  } finally {
    await source.cancel().catch(() => undefined);
  }
  if (index < opened.records) {
    throw new ImportInputError(
      'truncated_file',
      `The shapefile '${files.name}' is truncated: its .shp holds ${index} features but its .dbf ${opened.records}.`,
    );
  }
  options.onBytes?.(zipSize);
}

/** Opens the zip and runs `use` over its shapefile layers, closing the zip afterwards. */
async function withZip<T>(
  path: string,
  limits: ImportLimits,
  use: (zip: OpenZip, layers: ShapefileEntries[]) => Promise<T>,
): Promise<T> {
  const zip = await openZip(path, limits);
  try {
    return await use(zip, layersOf(zip.entries));
  } finally {
    zip.close();
  }
}

/** Discovery of a zipped shapefile: one layer per .shp. */
export async function discoverShapefileZip(
  path: string,
  _filename: string,
  sizeBytes: number,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const limits = limitsOf(options.limits);
  const warnings: string[] = [];
  const layers = await withZip(path, limits, async (zip, entries) => {
    const found = [];
    for (const layer of entries) {
      const { dir, files } = await extractLayer(zip, layer, limits, options.signal);
      try {
        const opened = await openLayer(files, { read: false });
        if (opened.encodingWarning) warnings.push(opened.encodingWarning);
        if (opened.prjWarning) warnings.push(opened.prjWarning);
        const scan = new LayerScan(layer.name);
        for (const f of opened.fields) scan.fields.declare(f.name);
        for await (const { index, feature } of layerFeatures(files, opened, options, sizeBytes)) {
          scan.count++;
          const info = feature.geometry === null ? null : geometryInfo(feature.geometry, `feature ${index}`);
          scan.addGeometry(index, info);
        }
        found.push({ ...scan.result(opened.srid, warnings), fields: opened.fields });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    return found;
  });
  return { format: 'shapefile', size_bytes: sizeBytes, layers, warnings };
}

/** The features of one shapefile layer of the zip, in file order. */
export async function* readShapefileZip(
  path: string,
  layer: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature> {
  const limits = limitsOf(options.limits);
  const zipSize = (await stat(path)).size;
  const zip = await openZip(path, limits);
  let dir: string | undefined;
  try {
    const layers = layersOf(zip.entries);
    const entries = layers.find((l) => l.name === layer);
    if (!entries) {
      throw new ImportInputError(
        'unknown_layer',
        `The zip has no shapefile layer '${layer}' (it has ${layers.map((l) => l.name).join(', ')}).`,
      );
    }
    const extracted = await extractLayer(zip, entries, limits, options.signal);
    dir = extracted.dir;
    zip.close();
    const opened = await openLayer(extracted.files, { read: true, encoding: options.encoding });
    for await (const { feature } of layerFeatures(extracted.files, opened, options, zipSize)) yield feature;
  } finally {
    zip.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}
