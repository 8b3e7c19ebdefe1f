import { InvalidInputError } from '../domain/errors.ts';

/** Encodes DynamoDB's LastEvaluatedKey as an opaque cursor. */
export function encodeCursor(lastKey: Record<string, unknown> | undefined): string | undefined {
  return lastKey ? Buffer.from(JSON.stringify(lastKey), 'utf8').toString('base64url') : undefined;
}

/** Decodes a cursor made by `encodeCursor`; anything else is a 400. Only the named string keys are accepted. */
export function decodeCursor(
  cursor: string | undefined,
  allowedKeys: readonly string[],
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
  if (entries.length !== allowedKeys.length) throw invalid();
  for (const [k, v] of entries) {
    if (!allowedKeys.includes(k) || typeof v !== 'string' || v.length === 0 || v.length > 1024)
      throw invalid();
  }
  return value as Record<string, string>;
}
