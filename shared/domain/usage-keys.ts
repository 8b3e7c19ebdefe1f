/**
 * Usage keys (ADR 0111): the identities API Gateway's usage plan meters requests by. Not
 * credentials: the API's key source is AUTHORIZER, so clients never send one; the authorizer names
 * the key of each request (`usageIdentifierKey`).
 *
 * An account holds at most 10,000 API keys per region (not adjustable), so workspaces are not given
 * a key each: they are assigned, in creation order, to the slots of a bounded pool. The first
 * `poolSize` workspaces each have a key of their own; after that workspaces share, round robin, so
 * isolation degrades by sharing, never by refusal.
 */

/**
 * The tag every usage key of a deployment carries, valued with its usage plan's name; the
 * functions' IAM grants on API keys are conditioned on it, so they reach no other application's keys.
 */
export const USAGE_KEY_TAG = 'geoplane:usage-plan';

/** An API Gateway API key that belongs to the usage plan. */
export interface UsageKey {
  id: string;
  value: string;
}

/** The key a workspace is metered on: a slot of the pool and the value of its key. */
export interface UsageKeyAssignment {
  slot: number;
  value: string;
}

/** The recorded key of one slot of the pool. */
export interface UsageKeySlot extends UsageKey {
  slot: number;
  created_at: string;
}

/** Port: the slots of the pool, in the catalog table. */
export interface UsageKeySlotRepository {
  /** The next number of the assignment counter (1, 2, 3, … one per call, atomically). */
  nextAssignment(): Promise<number>;
  find(slot: number): Promise<UsageKeySlot | undefined>;
  /** Records a slot's key; false (nothing written) when another request recorded one first. */
  claim(slot: UsageKeySlot): Promise<boolean>;
  /** Every recorded slot, in slot order. */
  all(): Promise<UsageKeySlot[]>;
}

/** Port: makes and deletes the keys themselves (API Gateway on AWS; nothing to make locally). */
export interface UsageKeyMaker {
  /**
   * A new key, already in the usage plan. A key made but not added to the plan is deleted again
   * before this throws (no key is left behind by a failure).
   */
  make(slot: number): Promise<UsageKey>;
  /** Deletes a key; throws when it could not (the caller decides whether that matters). */
  discard(id: string): Promise<void>;
}

/**
 * Port: the key a new workspace is metered on (createWorkspace). Pool keys are shared, so they
 * outlive the workspaces assigned to them: deleting a workspace releases nothing.
 */
export interface UsageKeyProvisioner {
  assign(): Promise<UsageKeyAssignment>;
}

/** The slot of the `n`-th assignment (n from 1): round robin over the pool. */
export function slotOf(assignment: number, poolSize: number): number {
  return (assignment - 1) % poolSize;
}

/**
 * Assigns the next slot of the pool and makes sure its key exists: the recorded one, else a new
 * key recorded with a conditional write. Two requests that make a key for the same empty slot at
 * once both make one; the one whose record loses deletes its key again and takes the winner's.
 */
export async function assignUsageKey(
  slots: UsageKeySlotRepository,
  maker: UsageKeyMaker,
  poolSize: number,
  now = new Date(),
): Promise<UsageKeyAssignment> {
  const slot = slotOf(await slots.nextAssignment(), poolSize);
  const recorded = await slots.find(slot);
  if (recorded) return { slot, value: recorded.value };
  const made = await maker.make(slot);
  if (await slots.claim({ slot, ...made, created_at: now.toISOString() })) return { slot, value: made.value };
  // Another request recorded a key for this slot first: ours goes again (the sweep retries a failed delete).
  await maker.discard(made.id).catch(() => undefined);
  const winner = await slots.find(slot);
  if (!winner) throw new Error(`usage key slot ${slot} was claimed but cannot be read`);
  return { slot, value: winner.value };
}

/** A key of this deployment as the sweep finds it in API Gateway. */
export interface FoundKey {
  id: string;
  createdAt: Date;
}

/** Port: what the sweep of orphaned keys lists and deletes (API Gateway). */
export interface UsageKeyInventory {
  /** Every key this deployment made (by its tag), without values. */
  list(): Promise<FoundKey[]>;
  discard(id: string): Promise<void>;
}

/** How long a key may exist unrecorded: a request may be between making it and recording it. */
export const ORPHAN_GRACE_MS = 15 * 60_000;

/**
 * The keys the sweep deletes: made by this deployment but recorded by no slot (left by a request
 * that failed or lost a race and could not delete its key), and older than `graceMs`.
 */
export function orphanedKeys(
  found: readonly FoundKey[],
  recorded: ReadonlySet<string>,
  now: Date,
  graceMs = ORPHAN_GRACE_MS,
): FoundKey[] {
  return found.filter((key) => !recorded.has(key.id) && now.getTime() - key.createdAt.getTime() > graceMs);
}

/** Deletes the orphaned keys of the pool; returns how many it deleted and how many it could not. */
export async function sweepOrphanedKeys(
  slots: UsageKeySlotRepository,
  inventory: UsageKeyInventory,
  now = new Date(),
): Promise<{ deleted: number; failed: number }> {
  // Listed before the slots are read: a key recorded in between is then seen as recorded.
  const found = await inventory.list();
  const recorded = new Set((await slots.all()).map((slot) => slot.id));
  let deleted = 0;
  let failed = 0;
  for (const key of orphanedKeys(found, recorded, now)) {
    try {
      await inventory.discard(key.id);
      deleted++;
    } catch {
      failed++;
    }
  }
  return { deleted, failed };
}
