import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { urlNotAllowedMessage } from '#datasources/imports/https-source.ts';
import { IMPORT_LIMIT_REASONS, RuleViolationError, StateConflictError } from '#domain/errors.ts';
import {
  IMPORT_PHASES,
  type ImportJob,
  type ImportPhase,
  importFailureOf,
  REASON_MARK,
  taskFailureOf,
  withWayOut,
} from '#domain/import-model.ts';
import { planJob } from '#domain/import-planning.ts';
import type { ImportUsage } from '#domain/import-plans.ts';
import { type Discovery, ImportInputError, type ImportPlan } from '#domain/import-sources.ts';
import { runImportStep } from '#domain/import-steps.ts';
import { type ImportUploads, retryJob, rollbackJob, startJob } from '#domain/imports.ts';
import {
  discoveryOf,
  engine,
  inputOf,
  job,
  limits,
  MemoryImports,
  planOf,
  refusal,
  starter,
  stepDeps,
  stored,
  WS,
} from '../support/memory-imports.ts';

/**
 * Issue 25: no state of an import is a dead end. Every reason an import can end `failed` with is
 * read from the source (a new one fails this file until it is classified below), and its message
 * must name the way out: a plan change (PUT …/plan) and a retry, a retry, or — when the failure is
 * final — what to do instead (a new import, split the file). Then, for a failed import in every
 * phase, with and without discovery and service, exactly what planJob and retryJob allow,
 * and that a refusal always says why and where to go.
 */

const ROOT = join(import.meta.dirname, '../..');

// ─── The reasons, from the source ──────────────────────────────────────────────────────────────

/** How a failure is got past. */
type Way =
  /** The file's defect or a reader's limit: final before the file is discovered (a new import with a corrected file); at the load a plan change (leave the layer out) and a retry, or a new import. */
  | { kind: 'file' }
  /** A plan change (PUT …/plan), then a retry. */
  | { kind: 'plan' }
  /** A retry (after what the message names: an outage over, another import rolled back, room freed). */
  | { kind: 'retry' }
  /** Final: the message says what to do instead. */
  | { kind: 'final'; instead: RegExp };

const FILE: Way = { kind: 'file' };
const PLAN: Way = { kind: 'plan' };
const RETRY: Way = { kind: 'retry' };
const NEW_IMPORT: Way = { kind: 'final', instead: /create a new import|upload the file instead/i };
const SPLIT: Way = { kind: 'final', instead: /split the file|split it|create a new import/i };

/** A domain refusal of createService or createLayer while publishing, whatever its reason. */
const PUBLISH_REFUSAL = '(a refusal of the service or a layer)';

/** Every failure reason and its way out. The test fails on a reason found in the source but not here, and on one here no longer found. */
const REASONS: Record<string, Way> = {
  // Format readers (shared/datasources/imports/formats): the file itself.
  empty_file: FILE,
  unsupported_format: FILE,
  unreadable_file: FILE,
  file_too_complex: SPLIT,
  feature_too_large: FILE,
  invalid_csv_geometry: FILE,
  unknown_column: FILE,
  malformed_csv: FILE,
  invalid_coordinates: FILE,
  invalid_utf8: FILE,
  invalid_flatgeobuf: FILE,
  truncated_file: FILE,
  no_features: FILE,
  invalid_geojson: FILE,
  malformed_json: FILE,
  invalid_feature: FILE,
  invalid_geometry: FILE,
  invalid_geopackage: FILE,
  too_many_layers: SPLIT,
  too_many_fields: FILE,
  mixed_geometry_types: SPLIT,
  coordinates_out_of_range: FILE,
  missing_sidecar: FILE,
  invalid_shapefile: FILE,
  zip_limits: FILE,
  unsafe_zip_entry: FILE,
  invalid_zip: FILE,
  // The plan names what the load reads (a layer, its encoding, its CRS, its columns).
  unknown_layer: PLAN,
  encoding_unknown: PLAN,
  encoding_unsupported: PLAN,
  invalid_plan: PLAN,
  srid_required: PLAN,
  unknown_srid: PLAN,
  // Where the file comes from.
  source_not_found: NEW_IMPORT,
  upload_changed: NEW_IMPORT,
  import_source_changed: NEW_IMPORT,
  source_http_status: NEW_IMPORT,
  uri_not_allowed: NEW_IMPORT,
  source_timeout: RETRY,
  source_tls_failed: NEW_IMPORT,
  file_too_large: SPLIT,
  // Limits and quota (IMPORT_LIMIT_REASONS).
  import_layer_limit: PLAN,
  import_row_limit: PLAN,
  import_byte_limit: SPLIT,
  workspace_import_quota: PLAN,
  // Names (ADR 0126) and targets (ADR 0127).
  public_id_taken: PLAN,
  service_name_taken: PLAN,
  import_target_invalid: PLAN,
  import_rollback_order: RETRY,
  import_generation_expired: NEW_IMPORT,
  rollback_failed: RETRY,
  // Outages and internal failures (FAILURE_MESSAGES, failureOfReason).
  import_database_unavailable: RETRY,
  source_unavailable: RETRY,
  upload_store_unavailable: RETRY,
  store_unavailable: RETRY,
  datasource_unavailable: RETRY,
  workflow_unavailable: RETRY,
  dependency_unavailable: RETRY,
  import_step_timeout: RETRY,
  item_too_large: SPLIT,
  internal_error: RETRY,
  [PUBLISH_REFUSAL]: RETRY,
  // fail() with a plain string; importFailureOf's fallback for a code that is no reason.
  import_failed: FILE,
  invalid_file: FILE,
};

/**
 * Failure sites whose code is not a literal (`<file> <code expression>`, told apart by their
 * message): the reasons they fail with, so none goes unclassified.
 */
const DYNAMIC_CODES: { site: string; message?: RegExp; codes: string[] }[] = [
  // asInputError(error, code, what): the codes are the literals of its call sites (scanned below).
  { site: 'shared/datasources/imports/formats/errors.ts code', codes: [] },
  // The reader's thread relays an ImportInputError made by a reader (scanned there).
  { site: 'shared/datasources/imports/formats/reader-protocol.ts wire.code', codes: [] },
  // A target refused again at publish (resolveTargets' RuleViolationError).
  {
    site: 'shared/domain/import-steps.ts error.reason',
    message: /^… Change the plan/,
    codes: ['import_target_invalid'],
  },
  // A name taken between the check and the write (AlreadyExistsError of createService/createLayer).
  {
    site: 'shared/domain/import-steps.ts error.reason',
    message: /^… Change … \(PUT/,
    codes: ['public_id_taken', 'service_name_taken'],
  },
  // Any other refusal of the service or a layer: its reason, a fixed message.
  {
    site: 'shared/domain/import-steps.ts error.reason',
    message: /the details are in the service's logs/,
    codes: [PUBLISH_REFUSAL],
  },
  { site: 'shared/datasources/imports/https-source.ts URL_NOT_ALLOWED', codes: ['uri_not_allowed'] },
];

/** Where a site's failure ends the import: the readers run at discovery and at the load. */
function phasesOf(file: string, code: string): ImportPhase[] {
  if (file.includes('/formats/')) return ['discover', 'transform'];
  if (/https-source|\/sources\.ts/.test(file)) return ['discover'];
  if (/pipeline|database(-[a-z]+)?\.ts/.test(file)) return ['transform'];
  if (file.endsWith('generations.ts')) return code === 'import_target_invalid' ? ['publish'] : ['rollback'];
  if (file.endsWith('import-steps.ts')) return code === 'rollback_failed' ? ['rollback'] : ['publish'];
  throw new Error(`${file}: no phase known for its failures; add it to phasesOf`);
}

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The index just past the JS token that starts at `i` (a string, template, or bracketed group). */
function skip(text: string, i: number): number {
  const c = text[i];
  if (c === "'" || c === '"') {
    let j = i + 1;
    while (text[j] !== c) j += text[j] === '\\' ? 2 : 1;
    return j + 1;
  }
  if (c === '`') {
    let j = i + 1;
    while (text[j] !== '`') {
      if (text[j] === '\\') j += 2;
      else if (text[j] === '$' && text[j + 1] === '{') j = skip(text, j + 1);
      else j++;
    }
    return j + 1;
  }
  if (c === '(' || c === '[' || c === '{') {
    const close = { '(': ')', '[': ']', '{': '}' }[c];
    let j = i + 1;
    while (text[j] !== close) j = skip(text, j);
    return j + 1;
  }
  return i + 1;
}

/** The top-level arguments of the call whose `(` is at `open`. */
function callArgs(text: string, open: number): string[] {
  const end = skip(text, open) - 1;
  const args: string[] = [];
  let start = open + 1;
  for (let j = start; j < end; ) {
    if (text[j] === ',') {
      args.push(text.slice(start, j).trim());
      start = j + 1;
      j++;
    } else j = skip(text, j);
  }
  const last = text.slice(start, end).trim();
  if (last) args.push(last);
  return args;
}

/** The string literals at the top of an expression (the branches of a conditional), `${…}` read as '…' unless it names a string constant of the file. */
function literals(expr: string, source: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < expr.length; ) {
    const c = expr[i];
    if (c === "'" || c === '"' || c === '`') {
      const end = skip(expr, i);
      const body = expr.slice(i + 1, end - 1);
      out.push(c === '`' ? template(body, source) : body.replace(/\\(.)/g, '$1'));
      i = end;
    } else i = c === '(' || c === '[' || c === '{' ? skip(expr, i) : i + 1;
  }
  return out;
}

/** A template's text, each `${…}` read as '…' unless it names a string constant of the file. */
function template(body: string, source: string): string {
  let text = '';
  for (let i = 0; i < body.length; ) {
    if (body[i] === '$' && body[i + 1] === '{') {
      const end = skip(body, i + 1);
      const name = body.slice(i + 2, end - 1).trim();
      text += (/^[A-Z_]+$/.test(name) && constant(source, name)) || '…';
      i = end;
    } else text += body[i++];
  }
  return text;
}

/** A module-level string constant of `source`. */
function constant(source: string, name: string): string | undefined {
  const found = new RegExp(`const ${name}\\s*=\\s*\\n?\\s*(['"])((?:\\\\.|(?!\\1).)*)\\1`).exec(source);
  return found?.[2];
}

interface Site {
  file: string;
  code: string;
  /** The message's text (each branch), `…` where a value goes. */
  messages: string[];
}

/** Every `new ImportInputError(code, message)` of shared/ and every code handed to a helper that makes one. */
function failureSites(): Site[] {
  const sites: Site[] = [];
  for (const file of tsFiles('shared')) {
    const source = readFileSync(join(ROOT, file), 'utf8');
    expect(source, `${file}: a subclass of ImportInputError is a failure site to classify`).not.toMatch(
      /extends ImportInputError/,
    );
    for (const m of source.matchAll(/new ImportInputError\(/g)) {
      const [codeArg = '', messageArg = ''] = callArgs(source, (m.index ?? 0) + m[0].length - 1);
      let messages = literals(messageArg, source);
      const helper = /const (\w+) = \(\s*message: string\s*\)(?:: \w+)? =>\s*$/.exec(
        source.slice(Math.max(0, (m.index ?? 0) - 120), m.index),
      );
      if (messages.length === 0 && helper) {
        // A helper that takes the message: its call sites' messages.
        messages = [...source.matchAll(new RegExp(`\\b${helper[1]}\\(`, 'g'))]
          .filter((c) => !source.slice((c.index ?? 0) - 6, c.index).includes('const'))
          .flatMap((c) => literals(callArgs(source, (c.index ?? 0) + c[0].length - 1)[0] ?? '', source));
      }
      if (messageArg === 'urlNotAllowedMessage()') messages = [urlNotAllowedMessage()];
      const literal = /^'([a-z][a-z0-9_]*)'$/.exec(codeArg);
      if (literal) {
        sites.push({ file, code: literal[1] as string, messages });
        continue;
      }
      const key = `${file} ${codeArg}`;
      const known = DYNAMIC_CODES.filter(
        (d) => d.site === key && (d.message === undefined || messages.some((t) => d.message?.test(t))),
      );
      expect(
        known,
        `${key} (${messages.join(' | ')}): the code is not a literal; add where it comes from to DYNAMIC_CODES`,
      ).toHaveLength(1);
      for (const code of known[0]?.codes ?? []) sites.push({ file, code, messages });
    }
    if (file.includes('/formats/')) {
      for (const m of source.matchAll(/\basInputError\(/g)) {
        const [, code = '', what = ''] = callArgs(source, (m.index ?? 0) + m[0].length - 1);
        const literal = /^'([a-z][a-z0-9_]*)'$/.exec(code);
        if (literal)
          sites.push({
            file,
            code: literal[1] as string,
            messages: literals(what, source).map((w) => `${w}: …`),
          });
      }
    }
  }
  return sites;
}

/** The reasons a job is failed with directly (`error_reason: …` of shared/domain). */
function directReasons(): { file: string; code: string }[] {
  return tsFiles('shared/domain').flatMap((file) => {
    const source = readFileSync(join(ROOT, file), 'utf8');
    return [...source.matchAll(/error_reason:\s*([^,\n]+)/g)].flatMap((m) =>
      [...(m[1] as string).matchAll(/(?:^|[?:]\s*)'([a-z][a-z0-9_]*)'/g)].map((c) => ({
        file,
        code: c[1] as string,
      })),
    );
  });
}

/** The reasons FAILURE_MESSAGES holds a message for. */
function failureMessageReasons(): string[] {
  const source = readFileSync(join(ROOT, 'shared/domain/import-model.ts'), 'utf8');
  const table = /const FAILURE_MESSAGES[^{]*\{([\s\S]*?)\n\};/.exec(source)?.[1] ?? '';
  return [...table.matchAll(/^\s{2}([a-z][a-z0-9_]*):/gm)].map((m) => m[1] as string);
}

/** A failed import of `phase` as its message is shown (discovery known past discovery). */
function shown(phase: ImportPhase, message: string, sourceKind: 'upload' | 'uri' = 'upload'): string {
  const discovery =
    phase === 'upload' || phase === 'acquire' || phase === 'discover' ? undefined : discoveryOf({ a: 1 });
  return withWayOut({ phase, source_kind: sourceKind, ...(discovery ? { discovery } : {}) }, message);
}

/** What a message of a failure of `way` in `phase` must name. */
function wayOutOf(way: Way, phase: ImportPhase): RegExp {
  if (way.kind === 'final') return way.instead;
  if (way.kind === 'retry') return /\bretry\b/i;
  if (phase === 'discover' || phase === 'acquire') return /create a new import|split the file|split it/i;
  if (way.kind === 'plan') return /PUT …\/plan|PUT the plan|in the (import )?plan/;
  return /PUT …\/plan|create a new import|split the file/i;
}

describe('every reason an import fails with names its way out (issue 25)', () => {
  const sites = failureSites();
  const direct = directReasons();
  const outages = failureMessageReasons();
  const found = new Set([
    ...sites.map((s) => s.code),
    ...direct.map((d) => d.code),
    ...outages,
    ...IMPORT_LIMIT_REASONS,
    'public_id_taken',
    'service_name_taken',
    'import_target_invalid',
    'import_rollback_order',
    'import_generation_expired',
    'import_failed',
    'invalid_file',
    PUBLISH_REFUSAL,
  ]);

  it('finds the failure sites in the source, and classifies every reason they use (and no other)', () => {
    expect(sites.length).toBeGreaterThan(80);
    expect(outages).toContain('internal_error');
    expect(direct.map((d) => d.code)).toEqual(expect.arrayContaining(['file_too_large', 'public_id_taken']));
    const unclassified = [...found].filter((code) => !(code in REASONS));
    expect(unclassified, 'classify these in REASONS (file, plan, retry or final)').toEqual([]);
    expect(
      Object.keys(REASONS).filter((code) => !found.has(code)),
      'reasons no longer in the source',
    ).toEqual([]);
  });

  it('every failure site: its message, as the failed job shows it, names the plan, a retry or what to do instead', () => {
    const dead: string[] = [];
    for (const site of sites) {
      const way = REASONS[site.code] as Way;
      const messages = site.messages.length ? site.messages : ['…'];
      for (const phase of phasesOf(site.file, site.code)) {
        for (const message of messages) {
          const text = shown(phase, message);
          if (!wayOutOf(way, phase).test(text))
            dead.push(`${relative('.', site.file)} ${site.code} (${phase}, ${way.kind}): ${text}`);
          // A URI is read again by a retry (its file can be corrected where it lives).
          if (
            phase === 'discover' &&
            !/\bretry\b|create a new import|split/i.test(shown(phase, message, 'uri'))
          )
            dead.push(`${site.code} (uri): ${shown(phase, message, 'uri')}`);
        }
      }
    }
    expect(dead).toEqual([]);
  });

  it('a file that fails before it is discovered says the failure is final and names a new import', async () => {
    const repo = new MemoryImports();
    const j = job({ status: 'running', phase: 'discover' });
    await repo.create(j);
    const eng = engine({
      discover: async () => {
        throw new ImportInputError('invalid_geojson', 'The file is JSON but not a GeoJSON object.');
      },
    });

    await runImportStep(stepDeps(repo, eng), inputOf(j), 1000);

    const failed = await stored(repo, j);
    expect(failed).toMatchObject({ status: 'failed', phase: 'discover', error_reason: 'invalid_geojson' });
    expect(failed.error_message).toBe(
      "The file is JSON but not a GeoJSON object. A plan can't change the file: correct it and create a new import with it.",
    );
    const plan = await refusal(planJob({ repo, starter, limits }, failed, planOf('a')));
    expect(plan).toMatchObject({ reason: 'import_not_discovered' });
    expect(plan.message).toMatch(/no plan to change yet.*Retry the import.*create a new import/);
  });

  it('a load that fails on a layer names the plan change and the new import; one that names its way keeps its words', async () => {
    for (const [error, expected] of [
      [
        new ImportInputError('invalid_geometry', "layer a: feature 3 has a geometry PostGIS can't read (x)."),
        "layer a: feature 3 has a geometry PostGIS can't read (x). Change the plan (PUT …/plan) and retry the import, or create a new import with a corrected file.",
      ],
      [
        new ImportInputError('import_source_changed', 'The file changed since; create a new import from it.'),
        'The file changed since; create a new import from it.',
      ],
    ] as const) {
      const repo = new MemoryImports();
      const j = job({
        status: 'running',
        phase: 'transform',
        discovery: discoveryOf({ a: 1 }),
        plan: planOf('a'),
      });
      await repo.create(j);
      await runImportStep(
        stepDeps(
          repo,
          engine({
            load: async () => {
              throw error;
            },
          }),
        ),
        inputOf(j),
        1000,
      );
      expect(await stored(repo, j)).toMatchObject({
        status: 'failed',
        error_reason: error.code,
        error_message: expected,
      });
    }
  });

  it('the outage and internal reasons (FAILURE_MESSAGES, failureOfReason) carry a fixed message that says retry (or split the file)', () => {
    for (const reason of [...outages, 'no_free_name', 'internal_error']) {
      const failure = taskFailureOf({
        Error: 'Error',
        Cause: JSON.stringify({ errorMessage: `${REASON_MARK}${reason}` }),
      });
      expect(failure.reason).toBe(reason);
      const way = REASONS[reason] ?? RETRY;
      for (const phase of IMPORT_PHASES)
        expect(shown(phase, failure.message), `${reason} ${phase}`).toMatch(wayOutOf(way, phase));
    }
    expect(taskFailureOf({ Error: 'States.Timeout' }).message).toMatch(/Retry the import/);
    // @ts-expect-error a code outside the list (a misspelling) is a compile error; at run time it reads as invalid_file
    expect(importFailureOf(new ImportInputError('Not A Reason', 'The file is bad.'))).toMatchObject({
      reason: 'invalid_file',
    });
  });

  it("the limits and the workspace's quota fail the discovered import naming PUT …/plan (or split the file)", async () => {
    const cases: [string, Discovery, ImportUsage, RegExp][] = [
      ['import_layer_limit', discoveryOf({ a: 1, b: 1, c: 1 }), { rows: 0, bytes: 0 }, /PUT …\/plan/],
      ['import_row_limit', discoveryOf({ a: 60, b: 50 }), { rows: 0, bytes: 0 }, /PUT …\/plan/],
      ['import_byte_limit', discoveryOf({ a: 1 }, 20_000), { rows: 0, bytes: 0 }, /Split the file/],
      ['workspace_import_quota', discoveryOf({ a: 10 }), { rows: 145, bytes: 0 }, /PUT …\/plan/],
    ];
    expect(cases.map((c) => c[0]).sort()).toEqual([...IMPORT_LIMIT_REASONS].sort());
    for (const [reason, discovery, used, way] of cases) {
      const repo = new MemoryImports();
      repo.used = used;
      const j = job({ status: 'running', phase: 'discover' });
      await repo.create(j);
      await runImportStep(stepDeps(repo, engine({ discover: async () => discovery })), inputOf(j), 1000);
      const failed = await stored(repo, j);
      expect(failed).toMatchObject({ status: 'failed', phase: 'transform', error_reason: reason });
      expect(failed.error_message).toMatch(way);
      // Repairable ones: a smaller plan is taken, then the retry.
      if (reason !== 'import_byte_limit' && reason !== 'workspace_import_quota') {
        const smaller = await planJob({ repo, starter, limits }, failed, planOf('a'));
        expect(smaller.status).toBe('failed');
        expect(await retryJob({ repo, starter, limits }, smaller)).toMatchObject({
          status: 'queued',
          phase: 'transform',
        });
      }
    }
  });

  it('a name taken at publish fails it naming the free name, PUT the plan and the retry; the plan and the retry get past it', async () => {
    for (const kind of ['public_id', 'service_name'] as const) {
      const repo = new MemoryImports();
      const j = job({
        status: 'publishing',
        phase: 'publish',
        discovery: discoveryOf({ a: 1 }),
        plan: planOf('a'),
      });
      await repo.create(j);
      const deps = stepDeps(repo, engine(), {
        layers: {
          findPublicId: async (_: string, id: string) =>
            kind === 'public_id' && id === 'a' ? { kind: 'layer' } : undefined,
        } as never,
        services: {
          findByName: async (_: string, n: string) =>
            kind === 'service_name' && n === 'svc' ? { id: 'other' } : undefined,
          findById: async () => undefined,
        } as never,
      });
      await runImportStep(deps, inputOf(j), 1000);
      const failed = await stored(repo, j);
      expect(failed).toMatchObject({ status: 'failed', phase: 'publish', error_reason: `${kind}_taken` });
      expect(failed.error_message).toMatch(
        /PUT the plan with .* '(a|svc)_2' \(free now\).*Then retry the import\./,
      );
      const replanned = await planJob(
        { repo, starter, limits },
        failed,
        kind === 'public_id'
          ? { layers: [{ source_layer: 'a', public_id: 'a_2', enabled: true, public: false }] }
          : { layers: planOf('a').layers, service_name: 'svc_2' },
      );
      expect(replanned).toMatchObject({ status: 'failed', reload: true });
      expect(await retryJob({ repo, starter, limits }, replanned)).toMatchObject({
        status: 'queued',
        phase: 'transform',
      });
    }
  });

  it('a file over the limit fails at its upload saying to split it or create a new import; a retry refuses, naming the new import', async () => {
    const repo = new MemoryImports();
    const j = job({ status: 'awaiting_upload', phase: 'upload', run: 0 });
    await repo.create(j);
    const uploadStore = {
      seal: async () => ({ size: 20_000, location: 'sealed', etag: 'e' }),
    } as unknown as ImportUploads;

    const failed = await startJob({ repo, uploads: uploadStore, starter }, j);

    expect(failed).toMatchObject({ status: 'failed', phase: 'upload', error_reason: 'file_too_large' });
    expect(failed.error_message).toMatch(/Split the file, or create a new import with a smaller one\./);
    expect((await refusal(retryJob({ repo, starter, limits }, failed))).message).toMatch(
      /upload the file again with a new import/,
    );
    expect((await refusal(planJob({ repo, starter, limits }, failed, planOf('a')))).message).toMatch(
      /failed at its upload.*create a new import and upload the file again/,
    );
  });

  it("rollbackImport's refusal when the replaced data is gone (a 409, before any failure) names what to do instead", async () => {
    const repo = new MemoryImports();
    const targeted: ImportPlan = {
      layers: [
        { ...(planOf('a').layers[0] as ImportPlan['layers'][0]), target: { layer: 'l', mode: 'replace' } },
      ],
    };
    // rollbackJob's refusals (409, not failures) name the way too.
    const expired = job({
      status: 'published',
      phase: 'publish',
      plan: targeted,
      rollback_until: '2000-01-01T00:00:00.000Z',
    });
    await repo.create(expired);
    const refusedRollback = await refusal(
      rollbackJob({ repo, starter } as never, { id: WS } as never, expired, 'u'),
    );
    expect(refusedRollback).toMatchObject({ reason: 'import_generation_expired' });
    expect(refusedRollback.message).toMatch(/Import the earlier file again with mode 'replace' instead/);
  });

  it('a rollback that fails on its data says whether to retry it or that it is final', async () => {
    for (const [error, way] of [
      [
        new ImportInputError(
          'import_rollback_order',
          'Import x changed the same layer after this one; roll it back first, then retry this rollback.',
        ),
        /retry this rollback/,
      ],
      [
        new ImportInputError(
          'import_generation_expired',
          sites.find((s) => s.code === 'import_generation_expired')?.messages[0] ?? '',
        ),
        /\(that is final\).*create a new import of the earlier file with mode 'replace'/,
      ],
    ] as const) {
      const repo = new MemoryImports();
      const j = job({
        status: 'rolling_back',
        phase: 'rollback',
        discovery: discoveryOf({ a: 1 }),
        plan: planOf('a'),
      });
      await repo.create(j);
      const eng = engine({
        revertTargets: async () => {
          throw error;
        },
      });
      const targeted = {
        ...(j.plan as ImportPlan),
        layers: [
          {
            ...(planOf('a').layers[0] as ImportPlan['layers'][0]),
            target: { layer: 'l', mode: 'replace' as const },
          },
        ],
      };
      await repo.save(j, { ...j, plan: targeted, version: j.version + 1 });
      await runImportStep(
        stepDeps(repo, eng, { layers: { findPublicId: async () => undefined } as never }),
        inputOf(j),
        1000,
      );
      const failed = await stored(repo, j);
      expect(failed).toMatchObject({ status: 'failed', phase: 'rollback', error_reason: error.code });
      expect(failed.error_message).toMatch(way);
    }
  });
});

// ─── The state machine: a failed import in every phase ─────────────────────────────────────────

type Outcome =
  | { accepted: { status: string; phase?: string } }
  | { refused: { reason: string; message: RegExp } };

/** What planJob does with a failed import (issue 25, ADR 0126). */
function planOutcome(phase: ImportPhase, discovered: boolean, service: boolean): Outcome {
  if (service || phase === 'rollback') {
    return {
      refused: {
        reason: 'import_state_conflict',
        message:
          phase === 'rollback'
            ? /data is still published, so its plan can't change\. Retry the import to resume the rollback\./
            : /data is still published, so its plan can't change\. Retry the import \(it publishes again\), or cancel it\./,
      },
    };
  }
  if (!discovered) {
    return {
      refused: {
        reason: 'import_not_discovered',
        message:
          phase === 'upload'
            ? /no plan to change; create a new import and upload the file again/
            : /no plan to change yet\. Retry the import .*, or create a new import/,
      },
    };
  }
  return { accepted: { status: 'failed', phase } };
}

/** What retryJob does with a failed import (ADR 0083, 0126). */
function retryOutcome(phase: ImportPhase, discovered: boolean): Outcome {
  if (phase === 'rollback') return { accepted: { status: 'rolling_back', phase } };
  if (phase === 'publish') return { accepted: { status: 'publishing', phase } };
  if (phase === 'upload')
    return {
      refused: { reason: 'import_state_conflict', message: /upload the file again with a new import/ },
    };
  return { accepted: { status: 'queued', phase: discovered ? 'transform' : 'acquire' } };
}

async function attempt(
  work: Promise<ImportJob>,
): Promise<{ job?: ImportJob; error?: { reason: string; message: string } }> {
  try {
    return { job: await work };
  } catch (error) {
    if (!(error instanceof StateConflictError || error instanceof RuleViolationError)) throw error;
    return { error: error as { reason: string; message: string } };
  }
}

function check(what: string, got: Awaited<ReturnType<typeof attempt>>, want: Outcome): void {
  if ('accepted' in want) {
    expect(got.error, what).toBeUndefined();
    expect(got.job, what).toMatchObject(want.accepted);
  } else {
    expect(got.job, what).toBeUndefined();
    expect(got.error?.reason, what).toBe(want.refused.reason);
    expect(got.error?.message, what).toMatch(want.refused.message);
  }
}

/** A refusal that points somewhere: a retry, a plan, a new import, a cancel or a rollback. */
const POINTS = /\bretry\b|PUT …\/plan|create a new import|new import|cancel it|roll .* back/i;

describe('a failed import in every phase has a way on (issue 25)', () => {
  const cases = IMPORT_PHASES.flatMap((phase) =>
    [true, false].flatMap((discovered) => [true, false].map((service) => ({ phase, discovered, service }))),
  );

  it.each(cases)(
    'failed in $phase, discovered: $discovered, service: $service',
    async ({ phase, discovered, service }) => {
      const failedJob = () =>
        job({
          status: 'failed',
          phase,
          error_reason: 'internal_error',
          error_message: 'x',
          ...(discovered ? { discovery: discoveryOf({ a: 10 }), plan: planOf('a') } : {}),
          ...(service ? { service_id: 'svc-1' } : {}),
        });

      // The plan, then the retry, each from the failed import.
      const repo = new MemoryImports();
      const j = failedJob();
      await repo.create(j);
      const plan = await attempt(
        planJob({ repo, starter, limits }, j, {
          layers: [{ source_layer: 'a', public_id: 'a2', enabled: true, public: false }],
        }),
      );
      check('setImportPlan', plan, planOutcome(phase, discovered, service));

      const fresh = new MemoryImports();
      const k = failedJob();
      await fresh.create(k);
      const retry = await attempt(retryJob({ repo: fresh, starter, limits }, k));
      check('retryImport', retry, retryOutcome(phase, discovered));
      if (retry.job) {
        expect(retry.job).toMatchObject({ retry_count: 1, run: k.run + 1 });
        expect(retry.job).not.toHaveProperty('error_reason');
      }

      // A plan accepted is taken by the retry: the load starts over with it (but a rollback resumes).
      if (plan.job) {
        const after = await attempt(retryJob({ repo, starter, limits }, plan.job));
        if (phase === 'upload') check('retry after the plan', after, retryOutcome(phase, discovered));
        else if (phase === 'rollback') expect(after.job).toMatchObject({ status: 'rolling_back' });
        else {
          expect(after.job).toMatchObject({
            status: 'queued',
            phase: 'transform',
            reload: true,
            reserved_rows: 10,
          });
          expect(after.job?.plan?.layers[0]?.public_id).toBe('a2');
        }
      }

      // Never refused by both without a message pointing somewhere.
      for (const refusedBy of [plan.error, retry.error])
        if (refusedBy) expect(refusedBy.message).toMatch(POINTS);
      expect(
        plan.job !== undefined || retry.job !== undefined || POINTS.test(retry.error?.message ?? ''),
      ).toBe(true);
    },
  );
});
