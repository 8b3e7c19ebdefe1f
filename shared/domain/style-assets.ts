import { createHash, randomUUID } from 'node:crypto';
import { InvalidInputError, NotFoundError } from './errors.ts';
import type { Page } from './page.ts';
import { parseXml, type XmlNode } from './xml.ts';

/** Largest asset accepted (413 above it): two DynamoDB chunks (ADR 0053). */
export const MAX_ASSET_BYTES = 512 * 1024;

export type AssetContentType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/svg+xml';

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
  /** Deletes conditioned on no style referencing it (409 naming one). */
  delete(asset: StyleAsset): Promise<void>;
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const refusedElements = new Set([
  'script',
  'foreignobject',
  'iframe',
  'object',
  'embed',
  'handler',
  'listener',
]);
const linkAttributes = new Set(['href', 'src']);

function unsafeSvg(detail: string): never {
  throw new InvalidInputError('unsafe_svg', `The SVG is refused: ${detail}.`);
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();

function checkCss(text: string, where: string): void {
  const lower = text.toLowerCase();
  if (lower.includes('@import')) unsafeSvg(`${where} imports a stylesheet`);
  for (let i = lower.indexOf('url('); i >= 0; i = lower.indexOf('url(', i + 4)) {
    const target = lower.slice(i + 4).replace(/^[\s'"]+/, '');
    if (!target.startsWith('#')) unsafeSvg(`${where} references an external resource`);
  }
}

function checkSvgNode(node: XmlNode, depth: number): void {
  if (depth > 64) unsafeSvg('it nests deeper than 64 elements');
  const element = localName(node.name);
  if (refusedElements.has(element)) unsafeSvg(`it contains a <${node.name}> element`);
  for (const [name, value] of Object.entries(node.attributes)) {
    const attribute = localName(name);
    if (attribute.startsWith('on')) unsafeSvg(`attribute ${name} is an event handler`);
    if (linkAttributes.has(attribute) && !value.trim().startsWith('#')) {
      unsafeSvg(`${name}="${value.slice(0, 64)}" references an external resource`);
    }
    checkCss(value, `attribute ${name}`);
  }
  if (element === 'style') checkCss(node.text, '<style>');
  for (const child of node.children) checkSvgNode(child, depth + 1);
}

/** Parses SVG and refuses scripts, event handlers, external references and DTDs. */
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
  checkSvgNode(doc.root, 0);
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

/** Creates or replaces an asset from raw bytes (size is enforced by makeHandler before this). */
export async function putStyleAsset(
  repo: StyleAssetRepository,
  workspaceId: string,
  name: string,
  bytes: Buffer,
  now = new Date(),
): Promise<{ asset: StyleAsset; created: boolean }> {
  if (bytes.length === 0) throw new InvalidInputError('body_required', 'The asset bytes are required.');
  const content_type = sniffContentType(bytes);
  const previous = await repo.find(workspaceId, name);
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
}
