/**
 * Property values cast in JS to the text of their staged column's type (ADR 0085): a value that
 * doesn't fit becomes NULL and is counted, texts lose their NUL bytes (PostgreSQL refuses them).
 */
import type { FieldType } from '#domain/import-sources.ts';

/** Marks a value that does not fit its column type. */
export const MISFIT = Symbol('misfit');

const INT4_MIN = -2147483648;
const INT4_MAX = 2147483647;
const INT8_MIN = -9223372036854775808n;
const INT8_MAX = 9223372036854775807n;
const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
/** ISO 8601 date-time (a naive one is read as UTC: the session's TimeZone). */
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;
const TRUE_TEXT = new Set(['true', 't', 'yes', 'y', '1']);
const FALSE_TEXT = new Set(['false', 'f', 'no', 'n', '0']);

/** Removes NUL characters, which a PostgreSQL text can't hold. */
export function stripNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '') : text;
}

/**
 * The value as the text (or number/boolean) pg sends for a column of `type`; null for an empty
 * value; MISFIT when it can't be represented.
 */
export function castValue(value: unknown, type: FieldType): string | number | boolean | null | typeof MISFIT {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'text':
      if (typeof value === 'string') return stripNul(value);
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? MISFIT : value.toISOString();
      if (typeof value === 'object') return stripNul(JSON.stringify(value));
      return stripNul(String(value));
    case 'integer':
    case 'bigint':
      return castInteger(value, type);
    case 'double precision': {
      const n =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && NUMBER_TEXT.test(value)
            ? Number(value)
            : typeof value === 'bigint'
              ? Number(value)
              : Number.NaN;
      return Number.isFinite(n) ? n : MISFIT;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : MISFIT;
      if (typeof value === 'string') {
        const t = value.trim().toLowerCase();
        if (TRUE_TEXT.has(t)) return true;
        if (FALSE_TEXT.has(t)) return false;
      }
      return MISFIT;
    }
    case 'date': {
      if (value instanceof Date) {
        return Number.isNaN(value.getTime()) ? MISFIT : value.toISOString().slice(0, 10);
      }
      if (typeof value !== 'string') return MISFIT;
      const text = value.trim();
      const parts = DATE_TEXT.exec(text);
      if (!parts) return MISFIT;
      const d = new Date(`${text}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text ? text : MISFIT;
    }
    case 'timestamptz': {
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? MISFIT : value.toISOString();
      if (typeof value !== 'string') return MISFIT;
      const text = value.trim();
      if (!TIMESTAMP_TEXT.test(text)) return MISFIT;
      return Number.isNaN(Date.parse(text.replace(' ', 'T'))) ? MISFIT : text;
    }
    case 'jsonb': {
      try {
        const json = JSON.stringify(withoutNul(value, 0));
        return json === undefined ? null : json;
      } catch {
        return MISFIT;
      }
    }
  }
}

function castInteger(value: unknown, type: 'integer' | 'bigint'): string | number | typeof MISFIT {
  let n: bigint;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return MISFIT;
    if (type === 'integer') return value >= INT4_MIN && value <= INT4_MAX ? value : MISFIT;
    if (!Number.isSafeInteger(value)) return MISFIT;
    return value;
  }
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'string' && INTEGER_TEXT.test(value)) n = BigInt(value.trim());
  else if (typeof value === 'boolean') return MISFIT;
  else return MISFIT;
  if (type === 'integer') return n >= BigInt(INT4_MIN) && n <= BigInt(INT4_MAX) ? Number(n) : MISFIT;
  return n >= INT8_MIN && n <= INT8_MAX ? n.toString() : MISFIT;
}

/** A JSON value without NUL characters in its strings (jsonb refuses `\u0000`). */
function withoutNul(value: unknown, depth: number): unknown {
  if (depth > 64) throw new Error('too deep');
  if (typeof value === 'string') return stripNul(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map((v) => withoutNul(v, depth + 1));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[stripNul(k)] = withoutNul(v, depth + 1);
    return out;
  }
  return value;
}
