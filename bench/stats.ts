/** Small statistics and formatting helpers of the benchmark. */

/** Nearest-rank percentile (p in 0..100) of the samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

/** The median (the mean of the two middle values for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function mean(samples: readonly number[]): number {
  return samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : Number.NaN;
}

/** `1.23` (fixed digits), or `n/a` for NaN. */
export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** `1.23×`. */
export function ratio(value: number, floor: number): string {
  return floor > 0 && Number.isFinite(value) ? `${(value / floor).toFixed(2)}×` : 'n/a';
}

export function kb(bytes: number): string {
  return (bytes / 1024).toFixed(1);
}

/** `793,757`. */
export function thousands(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function verdict(pass: boolean): string {
  return pass ? '**PASS**' : '**FAIL**';
}

/**
 * A markdown table with aligned columns (readable as plain text too; the repository's formatter
 * leaves markdown alone). `align` is the separator row's cells, e.g. `---|---:`; default: the
 * first column left, the others right.
 */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align?: string,
): string {
  const right = (align?.split('|') ?? header.map((_, i) => (i === 0 ? '---' : '---:'))).map((a) =>
    a.trim().endsWith(':'),
  );
  const width = (s: string) => [...s].length;
  const widths = header.map((h, i) => Math.max(3, width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const pad = (s: string, i: number) => {
    const fill = ' '.repeat((widths[i] as number) - width(s));
    return right[i] ? fill + s : s + fill;
  };
  const line = (cells: readonly string[]) =>
    `| ${header.map((_, i) => pad(cells[i] ?? '', i)).join(' | ')} |`;
  const separator = `| ${widths.map((w, i) => (right[i] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(header), separator, ...rows.map(line)].join('\n');
}
