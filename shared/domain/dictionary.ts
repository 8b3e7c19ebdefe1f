/**
 * Lookups keyed by client data (workspace names, role ids, claim names, header and query names)
 * must never reach Object.prototype: a workspace named `constructor` would otherwise find
 * `function Object()` as its role (ADR 0075). Build such tables with `dictionary` (no prototype)
 * and read records that came from elsewhere (JSON, tokens) with `own`.
 */

/** A dictionary without a prototype: `constructor`, `toString` or `__proto__` are only ever its own entries. */
export function dictionary<V>(entries: Iterable<readonly [string, V]> = []): Record<string, V> {
  const out = Object.create(null) as Record<string, V>;
  for (const [key, value] of entries) out[key] = value;
  return out;
}

/** The value stored under `key` in the record itself — never one it inherits. */
export function own<V>(record: Readonly<Record<string, V>> | null | undefined, key: string): V | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}
