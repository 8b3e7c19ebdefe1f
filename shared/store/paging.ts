import { own } from '#domain/dictionary.ts';
import { InvalidInputError } from '#domain/errors.ts';

/** Encodes DynamoDB's LastEvaluatedKey as an opaque cursor. */
export function encodeCursor(lastKey: Record<string, unknown> | undefined): string | undefined {
  return lastKey ? Buffer.from(JSON.stringify(lastKey), 'utf8').toString('base64url') : undefined;
}

/** What each key of a cursor must be: any string, exactly a value, or a value with a prefix. */
export type CursorShape = Record<string, true | { equals: string } | { prefix: string }>;

/**
 * Decodes a cursor made by `encodeCursor` for one listing; anything else is a 400. The shape pins
 * the partition, so a cursor of another listing can't reach DynamoDB (which would reject it).
 */
export function decodeCursor(
  cursor: string | undefined,
  shape: CursorShape,
): Record<string, string> | undefined {
  if (cursor === undefined) return undefined;
  const invalid = () => new InvalidInputError('invalid_cursor', 'The cursor is not one this API returned.');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid();
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length !== Object.keys(shape).length) throw invalid();
  for (const [k, v] of entries) {
    // Own rules only: a cursor keyed `constructor` must not find Object (ADR 0075).
    const rule = own(shape, k);
    if (!rule || typeof v !== 'string' || v.length === 0 || v.length > 1024) throw invalid();
    if (rule !== true && 'equals' in rule && v !== rule.equals) throw invalid();
    if (rule !== true && 'prefix' in rule && !v.startsWith(rule.prefix)) throw invalid();
  }
  return value as Record<string, string>;
}
