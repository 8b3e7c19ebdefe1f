import { describe, expect, it } from 'vitest';
import {
  type FoundDamage,
  type IntegrityInspector,
  KIND_OF,
  REPORT_ONLY,
  repairCatalog,
  storedTileUsage,
} from '#domain/catalog-integrity.ts';
import { RuleViolationError } from '#domain/errors.ts';
import type { WorkspaceRepository } from '#domain/workspaces.ts';

/* The integrity repair's rules over an inspector that answers what each walk finds (ADR 0138). */

function damage(check: keyof typeof KIND_OF, id: string, fix?: () => Promise<boolean>): FoundDamage {
  return {
    id,
    kind: KIND_OF[check],
    check,
    entity: { type: 'x', id },
    detail: id,
    repair: 'r',
    repairable: Boolean(fix),
    ...(fix ? { fix } : {}),
  };
}

/** An inspector whose walks answer `walks` in turn; it records what was fixed, in order. */
function inspector(walks: FoundDamage[][], complete = true) {
  let n = 0;
  const inspect: IntegrityInspector['inspect'] = async () => ({
    complete,
    counts: { workspaces: 1, items: 1, layers_probed: 0, import_schemas: 0 },
    damage: walks[Math.min(n++, walks.length - 1)] ?? [],
    unchecked: [],
  });
  return { inspector: { inspect }, walks: () => n };
}

const workspaces = {} as WorkspaceRepository;

describe('repairCatalog', () => {
  it('changes nothing without confirm: every repairable finding would be repaired, the rest not', async () => {
    const fixed: string[] = [];
    const fix = (id: string) => async () => {
      fixed.push(id);
      return true;
    };
    const { inspector: i } = inspector([
      [
        damage('public_id_marker', 'm', fix('m')),
        damage('layer_role', 'r'),
        damage('role_refs', 'c', fix('c')),
      ],
    ]);
    const out = await repairCatalog({ inspector: i, workspaces }, { confirm: false });
    expect(out.dry_run).toBe(true);
    expect(fixed).toEqual([]);
    expect(Object.fromEntries(out.repairs.map((r) => [r.finding_id, r.outcome]))).toEqual({
      m: 'would_repair',
      r: 'not_repairable',
      c: 'would_repair',
    });
  });

  it('repairs references first, then counters from a second walk (not the first walk’s stale numbers)', async () => {
    const fixed: string[] = [];
    const fix = (id: string) => async () => {
      fixed.push(id);
      return true;
    };
    const first = [
      damage('style_layer_refs', 'stale-counter', fix('stale-counter')),
      damage('layer_service', 'l', fix('l')),
    ];
    const second = [damage('style_layer_refs', 'fresh-counter', fix('fresh-counter'))];
    const { inspector: i, walks } = inspector([first, second]);
    const out = await repairCatalog({ inspector: i, workspaces }, { confirm: true });
    expect(walks()).toBe(2);
    expect(fixed).toEqual(['l', 'fresh-counter']);
    expect(out.repairs.map((r) => [r.finding_id, r.outcome])).toEqual([
      ['l', 'repaired'],
      ['fresh-counter', 'repaired'],
    ]);
  });

  it('walks once when no reference needed repairing', async () => {
    const { inspector: i, walks } = inspector([[damage('summary_counters', 's', async () => true)]]);
    await repairCatalog({ inspector: i, workspaces }, { confirm: true });
    expect(walks()).toBe(1);
  });

  it('says when the damage changed meanwhile, and when a repair failed, without stopping the others', async () => {
    const { inspector: i } = inspector([
      [
        damage('public_id_marker', 'a', async () => false),
        damage('service_name_marker', 'b', async () => {
          throw new Error('boom');
        }),
        damage('claim_mapping_marker', 'c', async () => true),
      ],
    ]);
    const out = await repairCatalog({ inspector: i, workspaces }, { confirm: true });
    expect(Object.fromEntries(out.repairs.map((r) => [r.finding_id, r.outcome]))).toEqual({
      a: 'changed_meanwhile',
      b: 'failed',
      c: 'repaired',
    });
    // A failure's message is not leaked unless it is a domain rule's.
    expect(out.repairs.find((r) => r.finding_id === 'b')?.detail).not.toContain('boom');
  });

  it('refuses a confirmed repair from an incomplete walk', async () => {
    const { inspector: i } = inspector([[damage('public_id_marker', 'a', async () => true)]], false);
    await expect(repairCatalog({ inspector: i, workspaces }, { confirm: true })).rejects.toBeInstanceOf(
      RuleViolationError,
    );
    // A dry run of it is fine: it changes nothing.
    expect((await repairCatalog({ inspector: i, workspaces }, { confirm: false })).dry_run).toBe(true);
  });

  it('never repairs what would change who may read or sign in', () => {
    expect([...REPORT_ONLY].sort()).toEqual(['claim_mapping_role', 'group_member', 'layer_role']);
  });
});

describe('the tile cache usage check (ADR 0139)', () => {
  /** A tile store of `n` tiles of 10 bytes under `ws-1/`, one under `ws-10/`, listed `limit` at a time. */
  function store(n: number) {
    const keys = [...Array.from({ length: n }, (_, i) => `ws-1/l/f/0/0/${String(i).padStart(5, '0')}.mvt`)];
    const prefixes: string[] = [];
    return {
      prefixes,
      async list(prefix: string, after: string | undefined, limit: number) {
        prefixes.push(prefix);
        const all = [...keys, 'ws-10/l/f/0/0/0.mvt'].filter(
          (k) => k.startsWith(prefix) && (!after || k > after),
        );
        const tiles = all.slice(0, limit).map((key) => ({ key, bytes: 10 }));
        return { tiles, ...(all.length > limit ? { next: tiles.at(-1)?.key } : {}) };
      },
    };
  }

  it('counts every tile under the workspace prefix, page after page', async () => {
    const s = store(2500);
    expect(await storedTileUsage(s, 'ws-1', Date.now() + 60_000)).toEqual({ entries: 2500, bytes: 25_000 });
    // Three pages of one prefix, with its trailing slash: another workspace's tiles (ws-10) stay out.
    expect(s.prefixes).toEqual(['ws-1/', 'ws-1/', 'ws-1/']);
  });

  it('answers nothing (unchecked, not damage) when the listing outlives the deadline', async () => {
    let t = 0;
    expect(await storedTileUsage(store(2500), 'ws-1', 1, () => t++)).toBeUndefined();
  });

  it('is a counter check: repaired after references, from the second walk', async () => {
    expect(KIND_OF.tile_cache_usage).toBe('counter_mismatch');
    expect(REPORT_ONLY.has('tile_cache_usage')).toBe(false);
    const fixed: string[] = [];
    const fix = (id: string) => async () => {
      fixed.push(id);
      return true;
    };
    const walks = [
      [damage('public_id_marker', 'm1', fix('m1')), damage('tile_cache_usage', 'stale', fix('stale'))],
      [damage('tile_cache_usage', 'fresh', fix('fresh'))],
    ];
    await repairCatalog({ inspector: inspector(walks).inspector, workspaces }, { confirm: true });
    expect(fixed).toEqual(['m1', 'fresh']);
  });
});
