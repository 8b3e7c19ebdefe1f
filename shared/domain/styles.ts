import { randomUUID } from 'node:crypto';
import type { validateStyleMin as ValidateStyle } from '@maplibre/maplibre-gl-style-spec';
import { DependencyConflictError, InvalidInputError, NotFoundError, StateConflictError } from './errors.ts';
import { NAME_PATTERN } from './identifiers.ts';
import { lastWriterWinsOn } from './last-writer-wins.ts';
import type { Page, WorkspacePageQuery } from './page.ts';
import { checkVersion } from './workspaces.ts';
import { parseXml, type XmlNode } from './xml.ts';

export type StyleFormat = 'sld_1.0.0' | 'sld_1.1.0' | 'se_1.1.0' | 'mapbox';

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

let validateStyleMin: typeof ValidateStyle | undefined;
let loadingValidator: Promise<typeof ValidateStyle> | undefined;

/**
 * Loads the MapLibre style-spec validator (ADR 0100): ~200 KB that only a Mapbox style's save
 * needs, so it is a sidecar beside the style bundles (the package when run from source), loaded
 * on the first such save. `checkStyleBody` needs it loaded for Mapbox bodies.
 */
export function loadStyleValidator(): Promise<typeof ValidateStyle> {
  loadingValidator ??= (
    (typeof GEOPLANE_BUNDLE !== 'undefined'
      ? import(new URL('./style-spec.sidecar.mjs', import.meta.url).href)
      : import('@maplibre/maplibre-gl-style-spec')) as Promise<{ validateStyleMin: typeof ValidateStyle }>
  ).then(
    (spec) => {
      validateStyleMin = spec.validateStyleMin;
      return spec.validateStyleMin;
    },
    (error: unknown) => {
      loadingValidator = undefined;
      throw error;
    },
  );
  return loadingValidator;
}

/** Distinct assets one style may reference (each is a transaction item on save; ADR 0052). */
export const MAX_ASSET_REFERENCES = 20;

/** Largest stored style text in UTF-8 bytes: the style must fit one DynamoDB item (ADR 0052, 0073). */
export const MAX_STYLE_TEXT_BYTES = 256 * 1024;

/** Deepest nesting of arrays and objects accepted in a Mapbox/MapLibre style (ADR 0073). */
export const MAX_STYLE_JSON_DEPTH = 100;

/** A stored style. `body` is the authored text (Mapbox styles as JSON text). */
export interface Style {
  id: string;
  workspace_id: string;
  name: string;
  format: StyleFormat;
  title?: string;
  description?: string;
  body: string;
  /** Names of the style assets the body references (`asset:<name>`), sorted. */
  asset_refs: string[];
  version: number;
  created_at: string;
  updated_at: string;
}

/** What a client sends. Mapbox bodies may be an object or its JSON text. */
export interface StyleInput {
  name: string;
  format: StyleFormat;
  body: string | Record<string, unknown>;
  title?: string;
  description?: string;
}

/** Storage port of styles. */
export interface StyleRepository {
  find(workspaceId: string, name: string): Promise<Style | undefined>;
  /** A page of styles without their bodies. */
  list(workspaceId: string, limit: number, cursor?: string): Promise<Page<Omit<Style, 'body'>>>;
  /** Creates a style and its asset references (400 for an unknown asset, 409 for a taken name). */
  create(style: Style): Promise<void>;
  /**
   * Replaces (and maybe renames) a style, moving its asset references, conditioned on `previous`'s
   * version (and, for a rename, on no layer using it): false when that condition failed.
   */
  update(previous: Style, next: Style): Promise<boolean>;
  /** Deletes a style and its asset references conditioned on its version and on no layer using it: false when that failed. */
  delete(style: Style): Promise<boolean>;
  /** The style's version and the layers using it, as stored now (undefined when it is gone). */
  usage(style: Style): Promise<StyleUsage | undefined>;
}

/** A stored style's version and use by layers, as the store found them. */
export interface StyleUsage {
  version: number;
  /** Layers using the style (its `layer_ref_count`). */
  layers: number;
}

/** What a refused write did to a style. */
export type StyleChange = 'changed' | 'renamed' | 'deleted';

/**
 * Why a conditioned write of `style` (as the caller read it) failed, from its usage as read
 * afterwards: gone (404), used by layers at the same version (409), or changed meanwhile.
 */
export function styleChangeRefusal(style: Style, action: StyleChange, found: StyleUsage | undefined): Error {
  if (!found) return new NotFoundError('style_not_found', `Style '${style.name}' does not exist.`);
  if (found.layers > 0 && found.version === style.version) {
    return new DependencyConflictError(
      'style_in_use',
      `Style '${style.name}' is used by ${found.layers} layer(s); it can't be ${action} while they use it.`,
      { layer_count: found.layers },
    );
  }
  return new StateConflictError(
    'concurrent_modification',
    'The style was changed by another request; retry.',
  );
}

function invalidStyle(detail: string): never {
  throw new InvalidInputError('invalid_style', detail);
}

/** `asset:<name>` or `asset://<name>`, the whole string; undefined for anything else. */
function assetName(value: string): string | undefined {
  const v = value.trim();
  if (!v.startsWith('asset:')) return undefined;
  const name = v.slice('asset:'.length).replace(/^\/\//, '');
  if (!NAME_PATTERN.test(name)) {
    throw new InvalidInputError(
      'invalid_asset_reference',
      `'${v.slice(0, 80)}' is not asset:<name> with a valid asset name.`,
    );
  }
  return name;
}

function collectXml(root: XmlNode, into: Set<string>): void {
  const pending = [root];
  for (let node = pending.pop(); node; node = pending.pop()) {
    for (const value of Object.values(node.attributes)) {
      const name = assetName(value);
      if (name) into.add(name);
    }
    const fromText = assetName(node.text);
    if (fromText) into.add(fromText);
    for (const child of node.children) pending.push(child);
  }
}

/** Refuses a JSON value nesting deeper than MAX_STYLE_JSON_DEPTH; iterative, so any depth is safe to check. */
function checkJsonDepth(value: unknown): void {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: v, depth } = next;
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_STYLE_JSON_DEPTH) {
      throw new InvalidInputError(
        'json_too_deep',
        `The style body nests arrays and objects deeper than ${MAX_STYLE_JSON_DEPTH} levels.`,
      );
    }
    for (const child of Array.isArray(v) ? v : Object.values(v))
      pending.push({ value: child, depth: depth + 1 });
  }
}

/** Collects the asset references of a JSON value (iteratively; its depth is already checked). */
function collectJson(value: unknown, into: Set<string>): void {
  const pending: unknown[] = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'string') {
      const name = assetName(v);
      if (name) into.add(name);
    } else if (v && typeof v === 'object') {
      for (const child of Array.isArray(v) ? v : Object.values(v)) pending.push(child);
    }
  }
}

const xmlRoots: Record<Exclude<StyleFormat, 'mapbox'>, { roots: string[]; version: string }> = {
  'sld_1.0.0': { roots: ['StyledLayerDescriptor'], version: '1.0.0' },
  'sld_1.1.0': { roots: ['StyledLayerDescriptor'], version: '1.1.0' },
  'se_1.1.0': { roots: ['FeatureTypeStyle', 'CoverageStyle'], version: '1.1.0' },
};

/**
 * Validates a style body for its format and returns the normalised text and the assets it
 * references: SLD/SE must be well-formed XML with the format's root element and version; Mapbox
 * styles must pass the MapLibre style-spec validator (loaded first with {@link loadStyleValidator}).
 */
export function checkStyleBody(
  format: StyleFormat,
  body: StyleInput['body'],
): { text: string; assets: string[] } {
  const assets = new Set<string>();
  let text: string;
  if (format === 'mapbox') {
    let style: unknown = body;
    if (typeof body === 'string') {
      try {
        style = JSON.parse(body);
      } catch {
        invalidStyle('A mapbox style body must be a JSON object (or its JSON text).');
      }
    }
    if (!style || typeof style !== 'object' || Array.isArray(style))
      invalidStyle('A mapbox style body must be a JSON object.');
    // Depth first: the validator and JSON.stringify recurse.
    checkJsonDepth(style);
    if (!validateStyleMin)
      throw new Error('loadStyleValidator() must settle before a Mapbox style is checked');
    const errors = validateStyleMin(style as Parameters<typeof ValidateStyle>[0]);
    if (errors.length) {
      throw new InvalidInputError(
        'invalid_style',
        `The MapLibre style is invalid: ${errors
          .slice(0, 5)
          .map((e) => e.message)
          .join('; ')}.`,
        { issues: errors.slice(0, 20).map((e) => ({ path: 'body', message: e.message })) },
      );
    }
    collectJson(style, assets);
    text = JSON.stringify(style);
  } else {
    if (typeof body !== 'string') invalidStyle(`A ${format} style body must be XML text.`);
    const rule = xmlRoots[format];
    const { root } = parseXml(body, 'style body');
    const local = root.name.slice(root.name.indexOf(':') + 1);
    if (!rule.roots.includes(local)) {
      invalidStyle(
        `A ${format} style must have the root element ${rule.roots.join(' or ')}, not ${root.name}.`,
      );
    }
    const version = root.attributes.version;
    if (
      local === 'StyledLayerDescriptor'
        ? version !== rule.version
        : version !== undefined && version !== rule.version
    ) {
      invalidStyle(
        `A ${format} style must declare version="${rule.version}" on its root (found ${version ?? 'none'}).`,
      );
    }
    collectXml(root, assets);
    text = body;
  }
  // Mapbox text is re-serialised and can outgrow the request (`1e20` is written out in full).
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_STYLE_TEXT_BYTES) {
    throw new InvalidInputError(
      'style_too_large',
      `The style body is ${bytes} bytes as stored; the limit is ${MAX_STYLE_TEXT_BYTES}.`,
    );
  }
  if (assets.size > MAX_ASSET_REFERENCES) {
    invalidStyle(
      `A style may reference at most ${MAX_ASSET_REFERENCES} assets; this one references ${assets.size}.`,
    );
  }
  return { text, assets: [...assets].sort() };
}

/** Style by name, 404 when missing. */
export async function requireStyle(repo: StyleRepository, workspaceId: string, name: string): Promise<Style> {
  const style = await repo.find(workspaceId, name);
  if (!style) throw new NotFoundError('style_not_found', `Style '${name}' does not exist.`);
  return style;
}

/** What the API returns for a style: Mapbox bodies as objects. */
export function presentStyle(
  style: Style,
): Omit<Style, 'body' | 'asset_refs'> & { body: unknown; asset_refs: string[] } {
  return { ...style, body: style.format === 'mapbox' ? JSON.parse(style.body) : style.body };
}

/** Creates a style; references to assets are recorded with it. */
export async function createStyle(
  { styles: repo }: { styles: StyleRepository },
  { workspaceId, body: input, now = new Date() }: { workspaceId: string; body: StyleInput; now?: Date },
): Promise<Style> {
  if (input.format === 'mapbox') await loadStyleValidator();
  const { text, assets } = checkStyleBody(input.format, input.body);
  const at = now.toISOString();
  const style: Style = {
    id: randomUUID(),
    workspace_id: workspaceId,
    name: input.name,
    format: input.format,
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    body: text,
    asset_refs: assets,
    version: 1,
    created_at: at,
    updated_at: at,
  };
  await repo.create(style);
  return style;
}

/** One try of updateStyle on `current` as read. */
async function replaceStyle(
  repo: StyleRepository,
  current: Style,
  input: StyleInput,
  ifMatch: string | undefined,
  now = new Date(),
): Promise<Style> {
  checkVersion(current, ifMatch);
  if (input.format === 'mapbox') await loadStyleValidator();
  const { text, assets } = checkStyleBody(input.format, input.body);
  const next: Style = {
    id: current.id,
    workspace_id: current.workspace_id,
    name: input.name,
    format: input.format,
    ...(input.title !== undefined ? { title: input.title } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    body: text,
    asset_refs: assets,
    version: current.version + 1,
    created_at: current.created_at,
    updated_at: now.toISOString(),
  };
  if (!(await repo.update(current, next))) {
    const action = current.name === next.name ? 'changed' : 'renamed';
    throw styleChangeRefusal(current, action, await repo.usage(current));
  }
  return next;
}

/** The style a change names: its workspace and its name (the `{style}` of the path). */
export interface StyleCommand {
  workspaceId: string;
  style: string;
  ifMatch?: string;
}

/** A page of the workspace's styles, without their bodies (listStyles). */
export function listStyles({ styles }: { styles: StyleRepository }, query: WorkspacePageQuery) {
  return styles.list(query.workspaceId, query.limit, query.cursor);
}

/** Reads a style (getStyle): 404 for a missing one. */
export function getStyle(
  { styles }: { styles: StyleRepository },
  { workspaceId, style }: Omit<StyleCommand, 'ifMatch'>,
): Promise<Style> {
  return requireStyle(styles, workspaceId, style);
}

/**
 * Replaces a style (PUT: the whole document; a different `name` renames it): 404 for a missing
 * style; honours If-Match.
 */
export async function updateStyle(
  { styles }: { styles: StyleRepository },
  { workspaceId, style, body, ifMatch, now = new Date() }: StyleCommand & { body: StyleInput; now?: Date },
): Promise<Style> {
  const current = await requireStyle(styles, workspaceId, style);
  // Without If-Match a lost race is applied again to the style as it now is (ADR 0075).
  return lastWriterWinsOn(
    current,
    () => requireStyle(styles, current.workspace_id, current.name),
    (previous) => replaceStyle(styles, previous, body, ifMatch, now),
  );
}

/** Deletes a style: 404 for a missing one, 409 while layers use it; honours If-Match. */
export async function deleteStyle(
  { styles }: { styles: StyleRepository },
  { workspaceId, style, ifMatch }: StyleCommand,
): Promise<void> {
  const current = await requireStyle(styles, workspaceId, style);
  checkVersion(current, ifMatch);
  if (!(await styles.delete(current)))
    throw styleChangeRefusal(current, 'deleted', await styles.usage(current));
}
