/**
 * The imports section's part of the report (bench/results.md): its verdict lines and its tables,
 * throughput against ogr2ogr on PostgreSQL, the embedded PostGIS, peak RSS, resumes and where the
 * time goes, each target judged by its rounds.
 */
import { cpus } from 'node:os';
import {
  type Count,
  EMBEDDED_MIN,
  type FileRun,
  type ImportsOutcome,
  type OurLoad,
  POINTS_LARGE,
  POINTS_SMALL,
  POLYGONS,
  RESUME_FEATURES,
  RESUME_MAX,
  RESUME_STEPS,
  RSS_FLAT_MAX,
  THROUGHPUT_MIN,
} from './imports-types.ts';
import { pairedOutcome, spreadOf } from './paired.ts';
import { fixed, median as medianOf, ratio, table, thousands, verdict } from './stats.ts';

const mb = (bytes: number | null | undefined) => (bytes ? fixed(bytes / 1024 ** 2, 0) : 'n/a');

/**
 * A target judged by its rounds (ADR 0140): one ratio a round, round k of `over` over round k of
 * `under` (the rounds both have), against `target` as `at least` or `at most`. PASS when the whole
 * p10–p90 of the ratios meets it, FAIL when none of it does, FAIL with no verdict when it
 * straddles; with the spread (and the median) to show.
 */
function byRounds(
  over: readonly number[],
  under: readonly number[],
  target: number,
  side: 'at least' | 'at most',
): { result: string; spread: string } {
  const ratios = over.slice(0, Math.min(over.length, under.length)).map((x, k) => x / (under[k] as number));
  // An "at least" target on x is an "at most" target on 1 / x.
  const outcome =
    side === 'at most'
      ? pairedOutcome(ratios, target)
      : pairedOutcome(
          ratios.map((r) => 1 / r),
          1 / target,
        );
  const s = spreadOf(ratios);
  const spread = `${fixed(s.p10)}–${fixed(s.p90)}× over ${ratios.length} round${ratios.length === 1 ? '' : 's'} (median ${fixed(s.median)}×)`;
  const result = outcome === 'straddles' ? '**FAIL** (straddles: no verdict)' : verdict(outcome === 'pass');
  return { result, spread };
}

/** The load of the median seconds (the lower middle one of an even count); undefined without loads. */
function medianLoad<T extends { seconds: number }>(loads: readonly T[]): T | undefined {
  const sorted = [...loads].sort((a, b) => a.seconds - b.seconds);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** `6.0 · 5.1 · 5.5` (the rounds in order). */
const rounds = (loads: readonly { seconds: number }[]) => loads.map((l) => fixed(l.seconds, 1)).join(' · ');

/** The row counts of the rounds: one figure when they agree. */
const rowCounts = (loads: readonly { count: Count }[]) =>
  loads.length ? [...new Set(loads.map((l) => thousands(l.count.rows)))].join(' / ') : 'n/a';

/** Why a side's figures can't be used: a failed load or a wrong row count in any round; undefined when fine. */
function broken(r: FileRun, who: 'ours' | 'gdal', expected: number): string | undefined {
  const problems = who === 'ours' ? r.oursProblems : r.gdalProblems;
  if (problems.length) return problems.join('; ');
  const loads = who === 'ours' ? r.ours.length : r.gdal.length;
  return loads === expected ? undefined : `${loads} of ${expected} loads finished`;
}

/** A target that could not be measured: a FAIL with its reason, never a skip (issue 27). */
const notMeasured = (why: string) => `**FAIL** (not measured: ${why})`;

/** The target lines of a section that measured nothing (every one FAIL, not measured, with the reason). */
function unmeasured(o: ImportsOutcome, why: string): string[] {
  const files = o.runs.length
    ? o.runs.map((r) => `${thousands(r.features)} ${r.label}`)
    : [
        `${thousands(POINTS_SMALL)} points`,
        `${thousands(POINTS_LARGE)} points`,
        `${thousands(POLYGONS)} polygons`,
      ];
  const resumes = o.resumes.length
    ? o.resumes.map((r) => `${thousands(r.features)} points, ${r.label}`)
    : ['GeoJSON FeatureCollection', 'CSV (lon/lat columns)', 'GeoJSONSeq (a feature a line)'].map(
        (l) => `${thousands(RESUME_FEATURES)} points, ${l}`,
      );
  return [
    ...files.map(
      (f) => `- imports, ${f}: features/s ≥ ${fixed(THROUGHPUT_MIN, 1)}× ogr2ogr's: ${notMeasured(why)}`,
    ),
    ...files.map(
      (f) =>
        `- imports, embedded PostGIS, ${f}: features/s ≥ ${EMBEDDED_MIN}× ogr2ogr's (into PostgreSQL): ${notMeasured(why)}`,
    ),
    `- imports: peak RSS flat (1M vs 100k points ≤ ${RSS_FLAT_MAX}×): ${notMeasured(why)}`,
    ...resumes.map(
      (r) => `- imports, resumes, ${r}: ${RESUME_STEPS} runs ≤ ${RESUME_MAX}× one run: ${notMeasured(why)}`,
    ),
  ];
}

/** The report's imports section; adds its verdict lines to `verdicts`. */
export function importsSection(o: ImportsOutcome, verdicts: string[], heading = '## 5.'): string {
  const title = `${heading} Imports: our loader vs GDAL's ogr2ogr, on PostgreSQL and the embedded PostGIS; resumed loads`;
  if (o.error && o.runs.every((r) => r.ours.length === 0)) {
    verdicts.push(...unmeasured(o, o.error));
    return [title, '', `**Not measured** (every target of the section FAILs): ${o.error}`].join('\n');
  }
  // The parts add their verdict lines in this order; their failed measurements go to `notes`.
  const notes: string[] = [];
  const throughput = throughputTable(o, verdicts, notes);
  const embedded = embeddedPart(o, gdalRates(o), verdicts, notes);
  const rss = rssLine(o, verdicts);
  const resumes = resumesPart(o, verdicts, notes);
  const warnings = loadWarnings(o);
  return [
    title,
    '',
    ...runNotes(o),
    methodParagraph(o),
    '',
    throughput,
    '',
    rss,
    '',
    embedded,
    '',
    resumes,
    '',
    ...(notes.length ? [...notes, ''] : []),
    ...(o.error ? [`**The section stopped early**: ${o.error}\n`] : []),
    phasesPart(o),
    ...(warnings.length ? ['', 'Warnings of our loads:', '', ...warnings] : []),
  ].join('\n');
}

/** The notes above the section: a scaled run, a busy machine ('' each when not). */
function runNotes(o: ImportsOutcome): string[] {
  const scaleNote =
    o.scale !== 1
      ? `> **Scaled run** (BENCH_IMPORTS_SCALE=${o.scale}): feature counts are not the planned ones.\n`
      : '';
  const busy = Math.max(o.load.start[0] ?? 0, o.load.end[0] ?? 0) > cpus().length;
  const busyNote = busy
    ? `> **The machine was busy** (load average above its ${cpus().length} CPUs): both loaders competed with other processes ` +
      '(and with the PostgreSQL they load into), so the seconds are slower and noisier than on an idle machine.\n'
    : '';
  return [scaleNote, busyNote];
}

/** How the section measured: the files, the database, both loaders, the rounds, the machine. */
function methodParagraph(o: ImportsOutcome): string {
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  return (
    `Three GeoJSON FeatureCollections generated into a temp dir with a fixed seed (written in batches, not held in memory; ${fixed(o.generateMs / 1000, 0)} s with the resume files): ` +
    'points with an int, a float, a text and a bool property (the 100k file is the first 100k features of the 1M one), and ' +
    'polygons (squares and pentagons, circumradius 0.0005–0.0055°, counter-clockwise, valid) with an int and a text property. ' +
    `The database: ${o.postgres || 'PostgreSQL'} ` +
    `(fsync off, TLS on; up in ${fixed(o.postgresStartMs / 1000, 1)} s, beside the generation), a fresh database with PostGIS owned by a loader role ` +
    '(both loaders log in as it, sslmode prefer, so both use TLS). ' +
    '**Ours**: `bench/import-load.ts` bundled as the import step Lambda is (esbuild with the options of infra/bundling.ts, its reader worker staged beside it), in its own `node` process per load: `discover` + `defaultPlan` (every layer enabled, as the engine passes it) + ' +
    '`loadImport` with an unlimited budget into its staging schema (chunks of 5,000 features, each written in one transaction with its checkpoint update, ' +
    "then finalizeLayer), the product's code as it stands in the working tree. Seconds = discover + load by the child's own clock (what a user waits for); " +
    "peak RSS = the child's `process.resourceUsage().maxRSS` (started through a forking `sh`, so it doesn't inherit the bench process's RSS as its peak). " +
    (o.gdalSkipped
      ? `**GDAL**: not measured, ${o.gdalSkipped}: its comparisons FAIL. `
      : `**GDAL**: ${o.gdalVersion}, \`ogr2ogr -f PostgreSQL PG:… file.geojson -nln bench_ogr_<file> -lco GEOMETRY_NAME=geom -lco SPATIAL_INDEX=GIST --config PG_USE_COPY YES -gt 100000\`, ` +
        `defaults otherwise (a serial \`ogc_fid\` primary key), wall clock of the process${o.timeRss ? ', peak RSS from `/usr/bin/time -v`' : ' (no `/usr/bin/time`: its peak RSS is not measured)'}. `) +
    `${o.rounds} round${o.rounds === 1 ? '' : 's'} over the files, ours first in odd rounds and ogr2ogr first in even ones; seconds, features/s and peak RSS are ` +
    "the median round's (every round's seconds beside them). **Every target here is judged by its rounds** (ADR 0140, as the latency targets): round k's ratio " +
    `(ours over ogr2ogr of the same round; the embedded load over ogr2ogr's round k; 1M over 100k peak RSS; the ${RESUME_STEPS}-run load over the one-run load), ` +
    'PASS when the whole p10–p90 of the ratios meets the target, FAIL when none of it does, FAIL with no verdict when it straddles; ' +
    `with ${o.rounds} rounds that is every round on one side. After each load the rows (and non-null geometries) are counted as the superuser, then the table ` +
    `is dropped and a CHECKPOINT taken; a count other than the file's features fails the measurement. ${cpus().length} CPUs; load average ${load(o.load.start)} at the start, ${load(o.load.end)} at the end. ` +
    `The section took ${fixed(o.ms / 1000, 0)} s.`
  );
}

/** Ours vs ogr2ogr into PostgreSQL, a row per file; adds each file's throughput verdict. */
function throughputTable(o: ImportsOutcome, verdicts: string[], notes: string[]): string {
  const rows: string[][] = [];
  for (const r of o.runs) {
    const oursBroken = broken(r, 'ours', o.rounds);
    const gdalBroken = o.gdalSkipped ? undefined : broken(r, 'gdal', o.rounds);
    const ourLoad = medianLoad(r.ours);
    const gdalLoad = medianLoad(r.gdal);
    const ours = ourLoad ? r.features / ourLoad.seconds : Number.NaN;
    const gdal = gdalLoad ? r.features / gdalLoad.seconds : Number.NaN;
    const what = `${thousands(r.features)} ${r.label}`;
    const vs = `${ratio(ours, gdal)}: ${thousands(ours)} vs ${thousands(gdal)} features/s`;
    let result: string;
    let line: string;
    if (oursBroken) {
      result = '**FAIL** (measurement)';
      line = `**FAIL** (the measurement failed: ${oursBroken})`;
      notes.push(`- **${what}, ours: FAIL of the measurement**: ${oursBroken}.`);
    } else if (o.gdalSkipped) {
      result = '**FAIL** (not measured)';
      line = notMeasured(o.gdalSkipped);
    } else if (gdalBroken) {
      result = '**FAIL** (not measured)';
      line = notMeasured(`the ogr2ogr measurement failed: ${gdalBroken}`);
      notes.push(`- **${what}, ogr2ogr: the measurement failed**: ${gdalBroken}.`);
    } else {
      // Features/s of the same files: ogr2ogr's seconds over ours, round by round.
      const judged = byRounds(
        r.gdal.map((l) => l.seconds),
        r.ours.map((l) => l.seconds),
        THROUGHPUT_MIN,
        'at least',
      );
      result = judged.result;
      line = `${result} (${judged.spread}; medians ${vs})`;
    }
    verdicts.push(`- imports, ${what}: features/s ≥ ${fixed(THROUGHPUT_MIN, 1)}× ogr2ogr's: ${line}`);
    const skip = (value: string) => (o.gdalSkipped ? '—' : value);
    rows.push([
      `\`${r.key}\``,
      thousands(r.features),
      fixed(r.bytes / 1024 ** 2, 0),
      ourLoad ? fixed(ourLoad.seconds, 1) : 'ERROR',
      rounds(r.ours),
      ourLoad ? thousands(ours) : 'n/a',
      mb(medianOf(r.ours.map((l) => l.peak_rss_bytes))),
      rowCounts(r.ours),
      skip(gdalLoad ? fixed(gdalLoad.seconds, 1) : 'ERROR'),
      skip(rounds(r.gdal)),
      skip(gdalLoad ? thousands(gdal) : 'n/a'),
      skip(mb(medianOf(r.gdal.map((l) => l.peak_rss_bytes ?? Number.NaN)))),
      skip(rowCounts(r.gdal)),
      o.gdalSkipped || !gdalLoad || !ourLoad ? 'n/a' : ratio(ours, gdal),
      result,
    ]);
  }
  return table(
    [
      'file',
      'features',
      'MB',
      'ours s',
      'ours rounds s',
      'ours features/s',
      'ours peak RSS MB',
      'ours rows',
      'ogr2ogr s',
      'ogr2ogr rounds s',
      'ogr2ogr features/s',
      'ogr2ogr peak RSS MB',
      'ogr2ogr rows',
      'ours ÷ ogr2ogr',
      `≥ ${fixed(THROUGHPUT_MIN, 1)}×`,
    ],
    rows,
    '---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---',
  );
}

/** ogr2ogr's features/s per file (NaN when not measured) and why it isn't there. */
function gdalRates(o: ImportsOutcome): Map<string, { rate: number; missing?: string }> {
  const rates = new Map<string, { rate: number; missing?: string }>();
  for (const r of o.runs) {
    const gdalBroken = o.gdalSkipped ? undefined : broken(r, 'gdal', o.rounds);
    const gdalLoad = medianLoad(r.gdal);
    rates.set(r.key, {
      rate: gdalLoad ? r.features / gdalLoad.seconds : Number.NaN,
      ...(o.gdalSkipped
        ? { missing: o.gdalSkipped }
        : gdalBroken
          ? { missing: `the ogr2ogr measurement failed: ${gdalBroken}` }
          : {}),
    });
  }
  return rates;
}

/** Ours into the embedded PostGIS vs ogr2ogr into PostgreSQL in the same run; adds each file's verdict. */
function embeddedPart(
  o: ImportsOutcome,
  gdalRate: Map<string, { rate: number; missing?: string }>,
  verdicts: string[],
  notes: string[],
): string {
  const embeddedRows: string[][] = [];
  for (const r of o.runs) {
    const what = `${thousands(r.features)} ${r.label}`;
    const e = o.embedded.runs.find((x) => x.key === r.key);
    const gdal = gdalRate.get(r.key) ?? { rate: Number.NaN, missing: 'ogr2ogr did not run' };
    const load = e ? medianLoad(e.loads) : undefined;
    const rate = load ? r.features / load.seconds : Number.NaN;
    const eBroken = e
      ? e.problems.length
        ? e.problems.join('; ')
        : e.loads.length === o.rounds
          ? undefined
          : `${e.loads.length} of ${o.rounds} loads finished`
      : undefined;
    let line: string;
    let result: string;
    if (o.embedded.error || !e) {
      line = notMeasured(
        `the embedded PostGIS: ${o.embedded.error ?? 'not started (the section stopped early)'}`,
      );
      result = '**FAIL** (not measured)';
    } else if (eBroken) {
      line = `**FAIL** (the measurement failed: ${eBroken})`;
      result = '**FAIL** (measurement)';
      notes.push(`- **${what}, ours into the embedded PostGIS: FAIL of the measurement**: ${eBroken}.`);
    } else if (gdal.missing) {
      line = notMeasured(gdal.missing);
      result = '**FAIL** (not measured)';
    } else {
      // Embedded round k against ogr2ogr's round k into PostgreSQL (earlier in the run).
      const judged = byRounds(
        r.gdal.map((l) => l.seconds),
        (e?.loads ?? []).map((l) => l.seconds),
        EMBEDDED_MIN,
        'at least',
      );
      result = judged.result;
      line = `${result} (${judged.spread}; medians ${ratio(rate, gdal.rate)}: ${thousands(rate)} vs ${thousands(gdal.rate)} features/s)`;
    }
    verdicts.push(
      `- imports, embedded PostGIS, ${what}: features/s ≥ ${EMBEDDED_MIN}× ogr2ogr's (into PostgreSQL): ${line}`,
    );
    embeddedRows.push([
      `\`${r.key}\``,
      thousands(r.features),
      load ? fixed(load.seconds, 1) : 'n/a',
      e ? rounds(e.loads) : 'n/a',
      load ? thousands(rate) : 'n/a',
      mb(medianOf(e?.loads.map((l) => l.peak_rss_bytes) ?? [])),
      e ? rowCounts(e.loads) : 'n/a',
      Number.isFinite(gdal.rate) ? thousands(gdal.rate) : 'n/a',
      load && Number.isFinite(gdal.rate) ? ratio(rate, gdal.rate) : 'n/a',
      result,
    ]);
  }
  return [
    `**The embedded PostGIS** (target ≥ ${EMBEDDED_MIN}× ogr2ogr's features/s into the real PostgreSQL of this run): ` +
      (o.embedded.error
        ? `not measured: ${o.embedded.error}. `
        : `${o.embedded.description}, started by this process after the loads above on a temp data dir (${fixed(o.embedded.startMs / 1000, 0)} s, ` +
          'its first start: a copy of the template data dir, initialised and seeded once (ADR 0155), then the import roles of `importRolesSql`; then its warm standby left to finish loading), ' +
          'loaded by the same child as its importer login with sslmode disable, exactly the IMPORT_DATABASE the local host gives the service. ' +
          'PGlite runs in worker threads of the bench process, which does nothing else meanwhile. ') +
      `The same ${o.rounds} round${o.rounds === 1 ? '' : 's'}, the median's seconds; rows counted as its superuser.`,
    '',
    table(
      [
        'file',
        'features',
        'ours s',
        'ours rounds s',
        'ours features/s',
        'ours peak RSS MB',
        'ours rows',
        'ogr2ogr features/s (PostgreSQL)',
        'embedded ÷ ogr2ogr',
        `≥ ${EMBEDDED_MIN}×`,
      ],
      embeddedRows,
      '---|---:|---:|---:|---:|---:|---:|---:|---:|---',
    ),
  ].join('\n');
}

/** Peak RSS of our loader, 1M vs 100k points, round by round; adds its verdict. */
function rssLine(o: ImportsOutcome, verdicts: string[]): string {
  const small = o.runs.find((r) => r.key === 'points_100k');
  const large = o.runs.find((r) => r.key === 'points_1m');
  const smallRss = medianOf(small?.ours.map((l) => l.peak_rss_bytes) ?? []);
  const largeRss = medianOf(large?.ours.map((l) => l.peak_rss_bytes) ?? []);
  if (Number.isFinite(smallRss) && Number.isFinite(largeRss)) {
    const judged = byRounds(
      (large?.ours ?? []).map((l) => l.peak_rss_bytes),
      (small?.ours ?? []).map((l) => l.peak_rss_bytes),
      RSS_FLAT_MAX,
      'at most',
    );
    const figures = `${judged.spread}; medians ${ratio(largeRss, smallRss)}: ${mb(largeRss)} MB vs ${mb(smallRss)} MB`;
    verdicts.push(
      `- imports: peak RSS flat (1M vs 100k points ≤ ${RSS_FLAT_MAX}×): ${judged.result} (${figures})`,
    );
    return (
      `Peak RSS of our loader, 1M vs 100k points, round by round: ${figures}; target ≤ ${RSS_FLAT_MAX}×: ${judged.result}. ` +
      `Every round: 100k ${(small?.ours ?? []).map((l) => mb(l.peak_rss_bytes)).join(' · ')} MB, ` +
      `1M ${(large?.ours ?? []).map((l) => mb(l.peak_rss_bytes)).join(' · ')} MB.`
    );
  }
  verdicts.push(
    `- imports: peak RSS flat (1M vs 100k points ≤ ${RSS_FLAT_MAX}×): ${notMeasured('the loads failed')}`,
  );
  return 'Peak RSS 1M vs 100k points: **FAIL** (not measured: the loads failed).';
}

/** Each file loaded in RESUME_STEPS runs vs in one (load seconds, discovery excluded); adds each file's verdict. */
function resumesPart(o: ImportsOutcome, verdicts: string[], notes: string[]): string {
  const resumeRows: string[][] = [];
  for (const r of o.resumes) {
    const what = `${thousands(r.features)} points, ${r.label}`;
    const one = medianLoad(r.one.map((l) => ({ ...l, seconds: l.load_seconds })));
    const stepped = medianLoad(r.stepped.map((l) => ({ ...l, seconds: l.load_seconds })));
    const missing =
      r.one.length === o.rounds && r.stepped.length === o.rounds
        ? undefined
        : `${r.one.length} of ${o.rounds} one-run and ${r.stepped.length} of ${o.rounds} ${RESUME_STEPS}-run loads finished`;
    const problem = r.problems.length ? r.problems.join('; ') : missing;
    let line: string;
    let result: string;
    if (problem || !one || !stepped) {
      line = `**FAIL** (the measurement failed: ${problem ?? 'no loads'})`;
      result = '**FAIL** (measurement)';
      notes.push(`- **resumes, ${what}: FAIL of the measurement**: ${problem ?? 'no loads'}.`);
    } else {
      const judged = byRounds(
        r.stepped.map((l) => l.load_seconds),
        r.one.map((l) => l.load_seconds),
        RESUME_MAX,
        'at most',
      );
      result = judged.result;
      line =
        `${result} (${judged.spread}; medians ${ratio(stepped.seconds, one.seconds)}: ${fixed(stepped.seconds, 1)} s in ${stepped.runs} loadImport calls ` +
        `vs ${fixed(one.seconds, 1)} s in one; rows exact)`;
    }
    verdicts.push(`- imports, resumes, ${what}: ${RESUME_STEPS} runs ≤ ${RESUME_MAX}× one run: ${line}`);
    const steps = stepped?.step_seconds ?? [];
    resumeRows.push([
      `\`${r.key}\``,
      r.label,
      fixed(r.bytes / 1024 ** 2, 0),
      one ? fixed(one.seconds, 1) : 'n/a',
      r.one.map((l) => fixed(l.load_seconds, 1)).join(' · ') || 'n/a',
      stepped ? fixed(stepped.seconds, 1) : 'n/a',
      r.stepped.map((l) => fixed(l.load_seconds, 1)).join(' · ') || 'n/a',
      stepped ? String(stepped.runs) : 'n/a',
      steps.length
        ? `${fixed(Math.min(...steps), 1)}–${fixed(Math.max(...steps), 1)} (first ${fixed(steps[0] ?? Number.NaN, 1)}, last ${fixed(steps[steps.length - 1] ?? Number.NaN, 1)})`
        : 'n/a',
      `${rowCounts(r.one)} / ${rowCounts(r.stepped)}`,
      one && stepped ? ratio(stepped.seconds, one.seconds) : 'n/a',
      result,
    ]);
  }
  const resumeFiles = o.resumes.map((r) => `${r.label} (${fixed(r.bytes / 1024 ** 2, 0)} MB)`).join(', ');
  return [
    `**Resumes** (target: a load forced into ${RESUME_STEPS} runs ≤ ${RESUME_MAX}× the same load in one run): ${resumeFiles || 'no files'}, ` +
      `${thousands(o.resumes[0]?.features ?? 0)} points each (the same values; the FeatureCollection is \`points_1m\` above), into the real PostgreSQL. ` +
      `\`bench/import-load.ts <file> <db> ${RESUME_STEPS}\`: discovery once, then run k of ${RESUME_STEPS} a fresh ImportDatabase and a fresh \`loadImport\` ` +
      "from the import's checkpoint, exactly as the import workflow resumes, with `shouldStop` true once the features committed before the run and read by it reach k/" +
      `${RESUME_STEPS} of the file: a run budget counted in features instead of time, asked before each chunk is read as the pipeline asks its time budget (a chunk read is always written, ADR 0143); the last run loads the rest and finalizes. ` +
      'Seconds: the loadImport calls by the child\'s clock (discovery excluded: it runs once either way), the median round; "runs" counts the loadImport calls. ' +
      `${o.rounds} round${o.rounds === 1 ? '' : 's'}, the one-run load first in odd rounds.`,
    '',
    table(
      [
        'file',
        'format',
        'MB',
        'one run s',
        'one run rounds s',
        `${RESUME_STEPS} runs s`,
        `${RESUME_STEPS} runs rounds s`,
        'runs',
        'a run s (min–max)',
        'rows (one / stepped)',
        'stepped ÷ one',
        `≤ ${RESUME_MAX}×`,
      ],
      resumeRows,
      '---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---',
    ),
  ].join('\n');
}

/** A row of where the time goes: one load's phases by its own clocks (none without the load). */
function phaseRow(name: string, u: OurLoad | undefined): string[][] {
  if (!u) return [];
  // writeChunk overlaps the reading of the next chunk, so it is not subtracted: the rest is the
  // pipeline's own work plus its waits for the write in flight.
  const other = u.load_seconds - u.read_seconds - u.finalize_seconds;
  const share = (x: number) => `${fixed(x, 1)} (${fixed((100 * x) / u.seconds, 0)} %)`;
  return [
    [
      name,
      fixed(u.seconds, 1),
      fixed(u.process_seconds, 1),
      share(u.discover_seconds),
      share(u.read_seconds),
      share(other),
      `${share(u.write_chunk_seconds)}, ${u.chunks}`,
      share(u.finalize_seconds),
      u.fields.join(', '),
    ],
  ];
}

/** Where our time goes (the median round's own clocks; see bench/import-load.ts), a row per load measured. */
function phasesPart(o: ImportsOutcome): string {
  const phases = [
    ...o.runs.flatMap((r) => phaseRow(`\`${r.key}\``, medianLoad(r.ours))),
    ...o.embedded.runs.flatMap((e) => phaseRow(`\`${e.key}\`, embedded`, medianLoad(e.loads))),
    ...o.resumes.flatMap((r) => [
      ...phaseRow(`\`${r.key}\`, one run`, medianLoad(r.one)),
      ...phaseRow(`\`${r.key}\`, ${RESUME_STEPS} runs`, medianLoad(r.stepped)),
    ]),
  ];
  return [
    "Where our time goes (the median round; seconds and share of discover + load by the child's own clocks). Read: inside the rows iterator " +
      "(file reading, parsing, feature assembly, values cast and geometries as text in the reader's thread, the batches taken in); pipeline and waits: the rest of the load loop (chunk arrays, waiting for the " +
      "chunk write in flight; for a stepped load also each run's connection, checkpoint and the re-read chunk); writeChunk: the chunk transactions' own duration, " +
      'summed over the chunks and runs: it runs beside the reading of the next chunk, so it overlaps read and pipeline and is not part of their sum; ' +
      "finalize: finalizeLayer. Discover + read + pipeline and waits + finalize = seconds. Process: the child's wall time, node startup and the bundle's import included.",
    '',
    table(
      [
        'file',
        'seconds',
        'process s',
        'discover',
        'read',
        'pipeline and waits',
        'writeChunk (overlaps), chunks',
        'finalize',
        'discovered fields',
      ],
      phases,
      '---|---:|---:|---:|---:|---:|---:|---:|---',
    ),
  ].join('\n');
}

/** The warnings of our loads, each once, as list items naming the file. */
function loadWarnings(o: ImportsOutcome): string[] {
  return [
    ...new Set([
      ...o.runs.flatMap((r) => r.ours.flatMap((l) => l.warnings).map((w) => `- \`${r.key}\`: ${w}`)),
      ...o.embedded.runs.flatMap((e) =>
        e.loads.flatMap((l) => l.warnings).map((w) => `- \`${e.key}\`, embedded: ${w}`),
      ),
      ...o.resumes.flatMap((r) =>
        [...r.one, ...r.stepped].flatMap((l) => l.warnings).map((w) => `- \`${r.key}\`: ${w}`),
      ),
    ]),
  ];
}
