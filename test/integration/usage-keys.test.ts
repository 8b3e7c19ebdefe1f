import { randomInt, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type {
  UsageKey,
  UsageKeyMaker,
  UsageKeyProvisioner,
  UsageKeySlotRepository,
} from '#domain/usage-keys.ts';
import type { WorkspaceRepository } from '#domain/workspaces.ts';
import { useHostStore } from '../support/store.ts';

let workspaces: WorkspaceRepository;
let slots: UsageKeySlotRepository;
let domain: typeof import('#domain/workspaces.ts');
let pool: typeof import('#domain/usage-keys.ts');

beforeAll(async () => {
  useHostStore();
  const repos = await import('#wiring/repositories.ts');
  workspaces = repos.workspaceRepository();
  slots = repos.usageKeySlotRepository();
  domain = await import('#domain/workspaces.ts');
  pool = await import('#domain/usage-keys.ts');
});

/** Records what API Gateway would be asked (the AWS adapter can't run here); `made` lists live keys. */
function recordingMaker(onMake?: (slot: number) => Promise<void>) {
  const made = new Map<string, UsageKey & { slot: number }>();
  const discarded: string[] = [];
  const maker: UsageKeyMaker = {
    async make(slot) {
      await onMake?.(slot);
      const key = { id: randomUUID(), value: `v-${randomUUID()}`, slot };
      made.set(key.id, key);
      return key;
    },
    async discard(id) {
      discarded.push(id);
      made.delete(id);
    },
  };
  return { maker, made, discarded };
}

/** The table's slots, but every assignment lands on `slot` (far from the slots the shared host uses). */
function pinnedTo(assignment: number): UsageKeySlotRepository {
  return {
    nextAssignment: async () => assignment,
    find: (slot) => slots.find(slot),
    claim: (slot) => slots.claim(slot),
    all: () => slots.all(),
  };
}

/** A slot number no other test of the run uses (the host's pool is 1,000 slots). */
const freshAssignment = () => 500_000 + randomInt(400_000);

describe('the usage-key pool in the table (ADR 0111)', () => {
  it('counts assignments atomically: concurrent callers never get the same number', async () => {
    const numbers = await Promise.all(Array.from({ length: 10 }, () => slots.nextAssignment()));
    expect(new Set(numbers).size).toBe(10);
    for (const n of numbers) expect(Number.isInteger(n) && n > 0).toBe(true);
  });

  it('records one key per slot: the second claim of a slot writes nothing', async () => {
    const slot = freshAssignment();
    const first = { slot, id: 'k-1', value: 'value-one-xxxxxxxxxxxxx', created_at: new Date().toISOString() };
    expect(await slots.claim(first)).toBe(true);
    expect(await slots.claim({ ...first, id: 'k-2', value: 'value-two-xxxxxxxxxxxxx' })).toBe(false);
    expect(await slots.find(slot)).toEqual(first);
    expect((await slots.all()).find((s) => s.slot === slot)).toEqual(first);
  });

  it('makes a slot key once, and two requests racing for an empty slot end on one key (the loser deletes its own)', async () => {
    const assignment = freshAssignment();
    const { maker, made, discarded } = recordingMaker(() => new Promise((r) => setTimeout(r, 20)));
    const [a, b] = await Promise.all([
      pool.assignUsageKey(pinnedTo(assignment), maker, 1_000_000),
      pool.assignUsageKey(pinnedTo(assignment), maker, 1_000_000),
    ]);
    expect(a).toEqual(b);
    expect(discarded).toHaveLength(1);
    expect([...made.values()].map((k) => k.value)).toEqual([a.value]);
    // A later workspace on the same slot reuses the recorded key: nothing is made.
    const again = await pool.assignUsageKey(pinnedTo(assignment), maker, 1_000_000);
    expect(again).toEqual(a);
    expect(made.size).toBe(1);
  });

  it('records nothing when the key cannot be made, so the next workspace of the slot tries again', async () => {
    const assignment = freshAssignment();
    const failing = recordingMaker(async () => {
      throw new Error('CreateApiKey throttled');
    });
    await expect(pool.assignUsageKey(pinnedTo(assignment), failing.maker, 1_000_000)).rejects.toThrow(
      /throttled/,
    );
    expect(await slots.find(assignment - 1)).toBeUndefined();
    const working = recordingMaker();
    const assigned = await pool.assignUsageKey(pinnedTo(assignment), working.maker, 1_000_000);
    expect(assigned.slot).toBe(assignment - 1);
    expect(working.made.size).toBe(1);
  });

  it('gives a new workspace the key of its slot, keeps it off the API view, and deletes no shared key with the workspace', async () => {
    const { maker, made } = recordingMaker();
    const provisioner: UsageKeyProvisioner = {
      assign: () => pool.assignUsageKey(slots, maker, 1000),
    };
    const ws = await domain.createWorkspace(
      { workspaces, usageKeys: provisioner },
      { body: { name: `uk-${randomUUID().slice(0, 8)}` }, now: new Date() },
    );
    expect(ws.usage_slot).toBeGreaterThanOrEqual(0);
    const recorded = await slots.find(ws.usage_slot as number);
    expect(ws.usage_key).toBe(recorded?.value);
    const stored = await domain.resolveWorkspace(workspaces, ws.id);
    expect(stored).toMatchObject({ usage_slot: ws.usage_slot, usage_key: ws.usage_key });
    const { presentWorkspace } = await import('#api/present.ts');
    expect(presentWorkspace(stored as NonNullable<typeof stored>)).not.toHaveProperty('usage_key');
    expect(presentWorkspace(stored as NonNullable<typeof stored>)).not.toHaveProperty('usage_slot');
    const live = made.size;
    await domain.deleteWorkspace(workspaces, stored as NonNullable<typeof stored>, undefined);
    expect(made.size).toBe(live);
    expect(await slots.find(ws.usage_slot as number)).toEqual(recorded);
  });

  it('sweeps a key no slot records once it is older than the grace period, and never a recorded one', async () => {
    const assignment = freshAssignment();
    const { maker } = recordingMaker();
    const kept = await pool.assignUsageKey(pinnedTo(assignment), maker, 1_000_000);
    const recordedId = (await slots.find(kept.slot))?.id as string;
    const now = new Date();
    const old = new Date(now.getTime() - pool.ORPHAN_GRACE_MS - 1000);
    const found = [
      { id: recordedId, createdAt: old },
      { id: 'orphan-old', createdAt: old },
      { id: 'orphan-new', createdAt: now },
    ];
    const deleted: string[] = [];
    const result = await pool.sweepOrphanedKeys(
      slots,
      { list: async () => found, discard: async (id) => void deleted.push(id) },
      now,
    );
    expect(deleted).toEqual(['orphan-old']);
    expect(result).toEqual({ deleted: 1, failed: 0 });
  });
});
