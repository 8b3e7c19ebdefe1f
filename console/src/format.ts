/**
 * Every status, size and progress text of the console, in one place. Sizes are IEC (1 KiB = 1024
 * bytes) everywhere — the API's limits are binary (a 512 KiB asset, a 256 KiB style, 10 MiB tiles),
 * so a file shown as "512 KiB" is exactly the limit it is checked against.
 */

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/** "1.2 MiB" for people: bytes below 1 KiB, one decimal below 10 of a unit. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  // 1023.96 KiB would round to "1024 KiB": say the next unit instead.
  if (value >= 1023.5 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 9.95 ? 1 : 0)} ${UNITS[unit]}`;
}

/** "1,234" in the reader's locale. */
export function formatCount(n: number): string {
  return n.toLocaleString();
}

/** "3 layers", "1 layer". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A status or phase as a word ("ready_to_publish" → "ready to publish"). */
export function statusText(status: string): string {
  return status.replace(/_/g, ' ');
}

/** Whole percent of `value` of `max`, 0–100 (a value past max is 100, an empty max 0). */
export function percentOf(value: number, max: number): number {
  if (!(max > 0)) return 0;
  return Math.round((Math.min(Math.max(value, 0), max) / max) * 100);
}

/** "100 %": the text beside every progress bar. */
export function percentText(value: number, max: number): string {
  return `${percentOf(value, max)} %`;
}

/** "3.0 MiB of 3.9 MiB" (value clamped to max). */
export function bytesOf(value: number, max: number): string {
  return `${formatBytes(Math.min(value, max))} of ${formatBytes(max)}`;
}

/** "250 of 300" (value clamped to max). */
export function countOf(value: number, max: number): string {
  return `${formatCount(Math.min(value, max))} of ${formatCount(max)}`;
}

/** A `datetime-local` value (the operator's time zone) as RFC 3339, or undefined when empty. */
export function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/** A name from a file name: its stem, with what a name may not contain replaced. */
export function nameFromFile(file: string): string {
  return file
    .replace(/\.[^.]+$/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
}
