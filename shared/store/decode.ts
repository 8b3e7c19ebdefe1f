import * as z from 'zod/mini';
import { CorruptItemError } from '#domain/chunked-workflow.ts';
import { withoutKeys } from './items.ts';
import { attributes } from './table.ts';

type Item = Record<string, unknown>;

/**
 * A stored item that doesn't have its entity's shape (ADR 0144): a corrupted item, or one an older
 * version wrote in a shape nothing reads any more. The server's fault, never the caller's: it is
 * no `DomainError`, so a request answers the generic 500 (logged with this message), and a
 * workflow fails with it like any item it can't interpret. The message names the entity, its key
 * (hashes withheld) and the fields that don't fit, never a field's value.
 */
export class StoredItemError extends CorruptItemError {
  override name = 'StoredItemError';
  constructor(
    /** The entity the item was read as (`layer`, `api key`, …). */
    readonly entity: string,
    /** The item's key as the message names it. */
    readonly key: string,
    /** What doesn't fit: `<path>: <expected>` per field, never a value. */
    readonly problems: string[],
  ) {
    super(`Stored ${entity} item ${key} is malformed: ${problems.join('; ')}.`);
  }
}

/** How one entity's items are read beside its schema. */
export interface DecoderOptions {
  /** Attributes dropped beside the key attributes and `entity` (a TTL, a counter the type doesn't have). */
  strip?: readonly string[];
  /** The entity tag the item must carry (for readers that may meet other items). */
  tag?: string;
  /** How the error names an item whose key holds a secret's hash (default: `PK`/`SK`, hashes withheld). */
  describe?: (item: Item) => string | undefined;
}

/** Hex runs as long as a digest: withheld from messages (the keys of API key hashes and sessions). */
const DIGEST = /[0-9a-f]{32,}/gi;

function keyText(item: Item): string {
  const part = (name: string) => (typeof item[name] === 'string' ? (item[name] as string) : '?');
  return `${part(attributes.pk)} / ${part(attributes.sk)}`.replace(DIGEST, '<hash>');
}

/** One issue as a message part: where, and what was expected there (zod's issue, without the input). */
function problemOf(issue: z.core.$ZodIssue): string {
  const path = issue.path.length ? issue.path.map(String).join('.') : '(item)';
  switch (issue.code) {
    case 'invalid_type':
      return `${path}: expected ${issue.expected}`;
    case 'invalid_value':
      return `${path}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return `${path}: matches none of its variants`;
    case 'custom':
      return `${path}: ${issue.message}`;
    default:
      return `${path}: ${issue.code}`;
  }
}

/**
 * THE way a repository reads its entity (ADR 0144): the item without its key attributes, entity
 * tag and `strip` attributes, checked against `schema` (built on first use, so an import costs
 * nothing). The result is what the schema outputs: loose schemas keep attributes they don't name
 * (as the cast they replace did), strict ones (`z.object`) keep only the fields they list.
 */
export function decoder<T>(
  entity: string,
  schema: () => z.ZodMiniType<T>,
  options: DecoderOptions = {},
): (item: Item) => T {
  let built: z.ZodMiniType<T> | undefined;
  const strip = options.strip ?? [];
  return (item) => {
    if (options.tag !== undefined && item.entity !== options.tag) {
      throw new StoredItemError(entity, describe(item, options), [
        `entity: expected ${JSON.stringify(options.tag)}`,
      ]);
    }
    built ??= schema();
    const out = built.safeParse(withoutKeys(item, ...strip));
    if (out.success) return out.data;
    throw new StoredItemError(entity, describe(item, options), out.error.issues.map(problemOf));
  };
}

function describe(item: Item, options: DecoderOptions): string {
  return options.describe?.(item) ?? keyText(item);
}

/** A string field whose values the domain types narrow (a status, a format): checked as a string. */
export function text<T extends string = string>() {
  return z.custom<T>((v) => typeof v === 'string', { error: 'expected string' });
}

/** A nested object the entity carries as a whole (a plan, a discovery): checked as an object. */
export function record<T extends object = Item>() {
  return z.custom<T>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
    error: 'expected object',
  });
}
