import { createHash, randomUUID } from 'node:crypto';
import { DependencyConflictError, InvalidInputError, NotFoundError, StateConflictError } from './errors.ts';
import { lastWriterWins } from './last-writer-wins.ts';
import type { Page, WorkspacePageQuery } from './page.ts';
import { checkTag, underIfMatch } from './workspaces.ts';
import { parseXml, type XmlNode } from './xml.ts';

/** Largest asset accepted (413 above it): two DynamoDB chunks (ADR 0053). */
export const MAX_ASSET_BYTES = 512 * 1024;

/** The formats an asset may have (sniffed from its bytes), as media types. */
export const assetContentTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/svg+xml'] as const;

export type AssetContentType = (typeof assetContentTypes)[number];

/** A style asset's metadata (the bytes are stored apart, in chunks). */
export interface StyleAsset {
  id: string;
  workspace_id: string;
  name: string;
  content_type: AssetContentType;
  size_bytes: number;
  sha256: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** Storage port of style assets. */
export interface StyleAssetRepository {
  find(workspaceId: string, name: string): Promise<StyleAsset | undefined>;
  list(workspaceId: string, limit: number, cursor?: string): Promise<Page<StyleAsset>>;
  /** Writes the metadata and bytes in one transaction; a replace keeps the reference count. */
  save(next: StyleAsset, bytes: Buffer, previous?: StyleAsset): Promise<void>;
  /** The stored bytes of the asset (re-reading the metadata if a replace raced the read). */
  read(asset: StyleAsset): Promise<{ asset: StyleAsset; bytes: Buffer }>;
  /**
   * Deletes the metadata and bytes conditioned on the version and on no style referencing it:
   * true when deleted, false when that condition failed (nothing written).
   */
  remove(asset: StyleAsset): Promise<boolean>;
  /** The asset's references as stored now (undefined when it is gone): their count and a referencing style. */
  referencesOf(asset: StyleAsset): Promise<AssetReferences | undefined>;
}

/** The references of an asset as the store found them. */
export interface AssetReferences {
  /** Styles referencing the asset (its `ref_count`). */
  count: number;
  /** Names of referencing styles the store read (at most one; none when `count` is 0). */
  styles: string[];
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Elements that run script, embed other documents or redirect: refused wherever they appear. */
const refusedElements = new Set([
  'script',
  'foreignobject',
  'iframe',
  'object',
  'embed',
  'handler',
  'listener',
  'frame',
  'frameset',
  'applet',
  'portal',
  'meta',
  'link',
  'base',
]);
/** SMIL elements that set another element's attribute (ADR 0074). */
const animationElements = new Set(['set', 'animate', 'animatemotion', 'animatetransform', 'animatecolor']);
const linkAttributes = new Set(['href', 'src']);
/** The five entities XML defines; a DTD (the only way to define more) is refused by parseXml. */
const xmlEntities = new Map([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
]);
/** A scheme that runs script, anywhere in a value (a URL may start after a space, `;`, `(`, `=`). */
const scriptScheme = /(?:^|[^a-z0-9+.-])(?:javascript|vbscript|livescript):/;
/** True when `item` is a data: URL once leading spaces and control characters are dropped (as URL parsers do). */
function isDataUrl(item: string): boolean {
  let i = 0;
  while (i < item.length && item.charCodeAt(i) <= 0x20) i++;
  return item.startsWith('data:', i);
}
/** CSS functions that fetch a resource named by a string (url() is checked on its own). */
const fetchingCss = /(?:^|[^a-z0-9_-])(?:-webkit-)?(?:image-set|image|cross-fade|src)\(/;

function unsafeSvg(detail: string): never {
  throw new InvalidInputError('unsafe_svg', `The SVG is refused: ${detail}.`);
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();

/**
 * An attribute value (or style text) as the XML parser hands it to the renderer: character
 * references and XML's five entities decoded. Any other entity is refused: without a DTD it is
 * not XML, and an HTML parser would decode it (`&colon;`, `&Tab;`).
 */
function decodeEntities(raw: string, where: string): string {
  return raw.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z_][\w.-]*);/g, (_ref, body: string) => {
    if (body.startsWith('#')) {
      const hex = body[1] === 'x' || body[1] === 'X';
      const code = Number.parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10);
      if (!(code > 0 && code <= 0x10ffff)) unsafeSvg(`${where} has an invalid character reference`);
      return String.fromCodePoint(code);
    }
    const named = xmlEntities.get(body);
    if (named === undefined)
      unsafeSvg(`${where} uses the entity &${body}; (only XML's five exist without a DTD)`);
    return named;
  });
}

/** Refuses a value that is, or holds, a javascript:/vbscript: URL, or starts a data: URL, whatever its casing. */
function checkUrls(value: string, where: string): void {
  // URL parsers drop tabs and newlines anywhere, and schemes are case-insensitive.
  const url = value.replace(/[\t\n\r]/g, '').toLowerCase();
  if (scriptScheme.test(url)) unsafeSvg(`${where} holds a script URL`);
  // A data: URL at the start of the value or of a list item (`values="#a;data:…"`).
  if (url.split(/[;,]/).some(isDataUrl)) unsafeSvg(`${where} holds a data: URL`);
}

/** CSS as a CSS parser reads it: comments dropped, escapes (`\\72`, `\\r`) decoded, lower case. */
function cssForm(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?(?:\*\/|$)/g, '')
    .replace(
      /\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|([^\n\r\f0-9a-fA-F]))/g,
      (_esc, hex: string, char: string) => {
        if (char !== undefined) return char;
        const code = Number.parseInt(hex, 16);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\uFFFD';
      },
    )
    .toLowerCase();
}

function checkCss(text: string, where: string): void {
  const css = cssForm(text);
  if (css.includes('@import')) unsafeSvg(`${where} imports a stylesheet`);
  for (let i = css.indexOf('url('); i >= 0; i = css.indexOf('url(', i + 4)) {
    const target = css.slice(i + 4).replace(/^[\s'"]+/, '');
    if (!target.startsWith('#')) unsafeSvg(`${where} references an external resource`);
  }
  if (fetchingCss.test(css)) unsafeSvg(`${where} references an external resource`);
  if (/expression\(|-moz-binding|behavior\s*:/.test(css)) unsafeSvg(`${where} runs script`);
  checkUrls(css, where);
}

function checkSvgElement(node: XmlNode): void {
  const element = localName(node.name);
  if (refusedElements.has(element)) unsafeSvg(`it contains a <${node.name}> element`);
  let animated: string | undefined;
  for (const [name, raw] of Object.entries(node.attributes)) {
    const attribute = localName(name);
    const value = decodeEntities(raw, `attribute ${name}`);
    if (attribute.startsWith('on')) unsafeSvg(`attribute ${name} is an event handler`);
    // xml:base would make even "#id" references point into another document.
    if (attribute === 'base') unsafeSvg(`attribute ${name} changes where links point`);
    if (linkAttributes.has(attribute) && !value.trim().startsWith('#')) {
      unsafeSvg(`${name}="${value.slice(0, 64)}" references an external resource`);
    }
    checkUrls(value, `attribute ${name}`);
    checkCss(value, `attribute ${name}`);
    if (attribute === 'attributename') animated = localName(value.trim());
  }
  // SMIL can set what the checks above refuse to see written: a link, a handler, a base.
  if (
    animationElements.has(element) &&
    animated !== undefined &&
    (linkAttributes.has(animated) || animated.startsWith('on') || animated === 'base')
  ) {
    unsafeSvg(`<${node.name}> animates the attribute ${animated}`);
  }
  if (element === 'style') checkCss(decodeEntities(node.text, '<style>'), '<style>');
}

/** Walks the tree iteratively (no recursion over client input). */
function checkSvgTree(root: XmlNode): void {
  const pending = [{ node: root, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.depth > 64) unsafeSvg('it nests deeper than 64 elements');
    checkSvgElement(next.node);
    for (const child of next.node.children) pending.push({ node: child, depth: next.depth + 1 });
  }
}

/**
 * Parses SVG and refuses scripts, event handlers, external references, DTDs, script and data:
 * URLs in any attribute (after entity decoding, whatever the casing), and SMIL animations of
 * links and handlers (ADR 0074).
 */
export function checkSvg(bytes: Buffer): void {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw unsupported();
  }
  const doc = parseXml(text, 'svg');
  if (doc.instructions.some((pi) => pi.toLowerCase() === 'xml-stylesheet'))
    unsafeSvg('it links a stylesheet');
  if (localName(doc.root.name) !== 'svg') {
    throw new InvalidInputError(
      'unsupported_asset_type',
      `An XML asset must be SVG (root <svg>), not <${doc.root.name}>.`,
    );
  }
  checkSvgTree(doc.root);
}

function unsupported() {
  return new InvalidInputError(
    'unsupported_asset_type',
    'The bytes are not PNG, JPEG, GIF or SVG (the type is sniffed from the content, not the header).',
  );
}

/** The content type sniffed from the bytes; anything but PNG, JPEG, GIF or safe SVG is a 400. */
export function sniffContentType(bytes: Buffer): AssetContentType {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG)) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const head = bytes.subarray(0, 6).toString('latin1');
  if (head === 'GIF87a' || head === 'GIF89a') return 'image/gif';
  const start = bytes
    .subarray(0, 512)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (start.startsWith('<')) {
    checkSvg(bytes);
    return 'image/svg+xml';
  }
  throw unsupported();
}

/** Asset by name, 404 when missing. */
export async function requireStyleAsset(
  repo: StyleAssetRepository,
  workspaceId: string,
  name: string,
): Promise<StyleAsset> {
  const asset = await repo.find(workspaceId, name);
  if (!asset) throw new NotFoundError('style_asset_not_found', `Style asset '${name}' does not exist.`);
  return asset;
}

/** The ETag of an asset: the quoted SHA-256 of its bytes (what GET answers; ADR 0087). */
export function assetTag(asset: Pick<StyleAsset, 'sha256'>): string {
  return `"${asset.sha256}"`;
}

/**
 * Creates or replaces an asset from raw bytes (size is enforced by makeHandler before this).
 * Honours If-Match on the asset's ETag (no If-Match matches an asset that doesn't exist); the
 * write is conditioned on the version read, so a concurrent upload is retried and then a 412.
 */
export async function putStyleAsset(
  { assets: repo }: { assets: StyleAssetRepository },
  {
    workspaceId,
    asset: name,
    bytes,
    ifMatch,
    now = new Date(),
  }: StyleAssetCommand & { bytes: Buffer; ifMatch?: string; now?: Date },
): Promise<{ asset: StyleAsset; created: boolean }> {
  if (bytes.length === 0) throw new InvalidInputError('body_required', 'The asset bytes are required.');
  const content_type = sniffContentType(bytes);
  // A lost race (a concurrent upload of the same name) is applied again: last writer wins (ADR 0075).
  return lastWriterWins(async () => {
    const previous = await repo.find(workspaceId, name);
    checkTag(previous && assetTag(previous), ifMatch);
    const at = now.toISOString();
    const asset: StyleAsset = {
      id: previous?.id ?? randomUUID(),
      workspace_id: workspaceId,
      name,
      content_type,
      size_bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      version: (previous?.version ?? 0) + 1,
      created_at: previous?.created_at ?? at,
      updated_at: at,
    };
    await repo.save(asset, bytes, previous);
    return { asset, created: !previous };
  });
}

/** Why a conditioned delete of `asset` failed, from its references as read afterwards: gone, referenced or changed. */
export function assetDeleteRefusal(asset: StyleAsset, found: AssetReferences | undefined): Error {
  if (!found)
    return new NotFoundError('style_asset_not_found', `Style asset '${asset.name}' does not exist.`);
  if (found.count > 0) {
    const style = found.styles[0] ?? 'another style';
    return new DependencyConflictError(
      'asset_referenced',
      `Style asset '${asset.name}' is referenced by style ${style}.`,
      { style },
    );
  }
  return new StateConflictError(
    'concurrent_modification',
    'The asset was changed by another request; retry.',
  );
}

/** The asset a request names: its workspace and its name (the `{asset}` of the path). */
export interface StyleAssetCommand {
  workspaceId: string;
  asset: string;
}

/** A page of the workspace's assets (listStyleAssets). */
export function listStyleAssets({ assets }: { assets: StyleAssetRepository }, query: WorkspacePageQuery) {
  return assets.list(query.workspaceId, query.limit, query.cursor);
}

/**
 * Deletes an asset no style references (409 naming one that does, 404 when gone). Honours If-Match
 * on its ETag; the delete is conditioned on the version read, so a concurrent upload is a 412 too.
 */
export async function deleteStyleAsset(
  { assets }: { assets: StyleAssetRepository },
  { workspaceId, asset: name, ifMatch }: StyleAssetCommand & { ifMatch?: string },
): Promise<void> {
  const asset = await requireStyleAsset(assets, workspaceId, name);
  checkTag(assetTag(asset), ifMatch);
  if (await assets.remove(asset)) return;
  const refusal = assetDeleteRefusal(asset, await assets.referencesOf(asset));
  await underIfMatch(ifMatch, () => Promise.reject(refusal));
}

/**
 * An asset's bytes, or only its tag when the caller already has them (`If-None-Match` naming its
 * ETag, or `*`): 404 for a missing asset.
 */
export async function readStyleAsset(
  { assets }: { assets: StyleAssetRepository },
  { workspaceId, asset: name, ifNoneMatch }: StyleAssetCommand & { ifNoneMatch?: string },
): Promise<{ notModified: string } | { asset: StyleAsset; bytes: Buffer }> {
  const meta = await requireStyleAsset(assets, workspaceId, name);
  const tags = ifNoneMatch?.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (tags?.includes(assetTag(meta)) || tags?.includes('*')) return { notModified: assetTag(meta) };
  return assets.read(meta);
}
