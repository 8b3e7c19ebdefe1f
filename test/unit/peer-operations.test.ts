import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { renamedOperationIds } from '#domain/renamed-operations.ts';

/**
 * The peer server's operations (issue #26, ADR 0132): every row of its table that this project
 * has, renamed, reshaped or must add is in the route table with the peer's method, path and
 * operationId.
 *
 * `test/fixtures/peer-operations.md` is a verbatim copy of `../shared/reference/peer-operations.md`,
 * the design folder beside the main checkout (read from the peer server's public router and OpenAPI
 * paths). CI runs on a fresh clone where that folder is absent, so the contract reads the copy; where
 * the source is present, one test fails when the two differ (copy it again, then see what fails here).
 */

const root = resolve(import.meta.dirname, '../..');
const fixture = resolve(root, 'test/fixtures/peer-operations.md');
const source = resolve(root, '../shared/reference/peer-operations.md');

const kinds = ['have', 'rename', 'reshaped', 'add', 'later'] as const;
type Kind = (typeof kinds)[number];

interface PeerRow {
  method: string;
  /** Relative to `/api/v1`, as the table writes it. */
  path: string;
  operationId: string;
  kind: Kind;
  /** The table's section (`## stac`). */
  section: string;
  /** What the `here` column says after its kind, without the parentheses. */
  note: string;
}

/** Every operation row of the table (`| METHOD | \`path\` | operationId | here |`). */
function parseTable(text: string): PeerRow[] {
  const rows: PeerRow[] = [];
  let section = '';
  for (const line of text.split('\n')) {
    section = /^## (.+)$/.exec(line)?.[1] ?? section;
    const row = /^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| (.+?) \| (.+?) \|$/.exec(line);
    if (!row) continue;
    const [, method, path, operationId, here] = row as unknown as [string, string, string, string, string];
    const kind = /^(\w+)/.exec(here)?.[1] as Kind;
    if (!kinds.includes(kind)) throw new Error(`unknown 'here' in: ${line}`);
    const note = here
      .slice(kind.length)
      .trim()
      .replace(/^\((.*)\)$/, '$1');
    rows.push({ method, path, operationId, kind, section, note });
  }
  return rows;
}

const text = readFileSync(fixture, 'utf8');
const table = parseTable(text);
const ofKind = (kind: Kind) => table.filter((r) => r.kind === kind);

/** Path parameters' names may differ (the peer's `/deletions/{operation}` is our `/deletions/{id}`). */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
const routeAt = (method: string, path: string) =>
  routes.find((r) => r.method === method && shape(r.path) === shape(`/api/v1${path}`));
const routeNamed = (operationId: string) => routes.find((r) => r.operationId === operationId);

/**
 * `add` rows still being built (issue #26): the contract skips them until they land, and fails once
 * one exists, so this list only shrinks — whoever adds one of them removes it here. Computed from
 * what the committed route table lacked when this test landed.
 */
const pending: Readonly<Record<string, string>> = {};

/** `reshaped` rows whose equivalent is no operation at all, with what stands in for it. */
const reshapedWithoutOperation: Readonly<Record<string, string>> = {
  runAuditRetention: 'audit records expire by DynamoDB TTL after auditRetentionDays (ADR 0113)',
};

/** What is wrong with one row that must be in the route table (undefined: nothing). */
function problemOf(row: PeerRow): string | undefined {
  const at = routeAt(row.method, row.path);
  if (!at) return `${row.operationId}: no route ${row.method} /api/v1${row.path}`;
  if (at.operationId !== row.operationId)
    return `${row.operationId}: ${row.method} /api/v1${row.path} is ${at.operationId}`;
  return undefined;
}

describe('the peer server’s operations (test/fixtures/peer-operations.md)', () => {
  it('parses every row the table counts', () => {
    const counts = /^Counts: (.+)\.$/m.exec(text)?.[1];
    expect(counts).toBeDefined();
    const stated = Object.fromEntries(
      (counts ?? '').split(', ').map((c) => {
        const [kind, n] = c.split(' ') as [string, string];
        return [kind, Number(n)];
      }),
    );
    const parsed = Object.fromEntries(kinds.map((k) => [k, ofKind(k).length]));
    expect(parsed).toEqual(stated);
  });

  it('has every `have`, `rename` and `add` operation with the peer’s method, path and operationId (but the pending ones)', () => {
    const due = table.filter(
      (r) => ['have', 'rename', 'add'].includes(r.kind) && !Object.hasOwn(pending, r.operationId),
    );
    expect(due.length).toBeGreaterThan(0);
    expect(due.map(problemOf).filter(Boolean)).toEqual([]);
  });

  it('lists as pending only `add` rows that are still missing (a pending operation that landed fails here)', () => {
    const adds = new Map(ofKind('add').map((r) => [r.operationId, r]));
    const wrong = Object.keys(pending).flatMap((id) => {
      const row = adds.get(id);
      if (!row) return [`${id} is not an \`add\` row of the table`];
      const landed = routeNamed(id) ?? routeAt(row.method, row.path);
      return landed ? [`${id} exists now (${landed.operationId}): remove it from \`pending\``] : [];
    });
    expect(wrong).toEqual([]);
  });

  it('has the operations ours were renamed to, and none of our old ids', () => {
    const renames = ofKind('rename').map((r) => ({
      old: /^ours: (\w+)$/.exec(r.note)?.[1],
      current: r.operationId,
    }));
    expect(renames).toHaveLength(7);
    for (const { old, current } of renames) {
      expect(old, current).toBeDefined();
      expect(routeNamed(old as string), `${old} is still a route`).toBeUndefined();
      expect(routeNamed(current), current).toBeDefined();
    }
    // Stored role policies naming an old id keep granting the renamed operation (ADR 0132).
    expect(renamedOperationIds).toEqual(Object.fromEntries(renames.map((r) => [r.old, r.current])));
  });

  it.each(ofKind('reshaped').map((r) => [`${r.method} ${r.path}`, r] as const))(
    'has the named equivalent of the reshaped %s',
    (_label, row) => {
      const named = /^(\w+) \(`(GET|POST|PUT|PATCH|DELETE) ([^`]+)`\)$/.exec(row.note);
      if (!named) {
        // No operation stands in for it: what does must be written down here.
        expect(Object.hasOwn(reshapedWithoutOperation, row.operationId), row.note).toBe(true);
        return;
      }
      const [, operationId, method, path] = named as unknown as [string, string, string, string];
      expect(routeNamed(operationId), operationId).toBeDefined();
      expect(routeAt(method, path)?.operationId).toBe(operationId);
    },
  );

  it('leaves out only the raster coverages, the STAC catalogue and the Swagger UI (`later`)', () => {
    const sections = new Set(ofKind('later').map((r) => r.section));
    expect([...sections].sort()).toEqual(['coverages', 'docs', 'stac']);
    expect(
      ofKind('later')
        .filter((r) => r.section === 'docs')
        .map((r) => r.path),
    ).toEqual(['/api.html', '/api.js']);
  });

  const sourceThere = existsSync(source);
  it.skipIf(!sourceThere)(
    sourceThere
      ? 'is a verbatim copy of ../shared/reference/peer-operations.md'
      : 'is a verbatim copy of ../shared/reference/peer-operations.md — skipped: that file is not beside this checkout (a fresh clone)',
    () => {
      expect(text, 'copy ../shared/reference/peer-operations.md to test/fixtures/ again').toBe(
        readFileSync(source, 'utf8'),
      );
    },
  );
});
