import {
  type ClaimMapping,
  type ClaimMappingRepository,
  createClaimMapping,
  GLOBAL_SCOPE,
  mappingTriple,
} from './claim-mappings.ts';
import { AlreadyExistsError, InvalidInputError, NotFoundError } from './errors.ts';
import type { RoleRepository } from './roles.ts';

/** A first administrator named by the deployment (cdk.json `bootstrapAdmins`, ADR 0089). */
export interface BootstrapAdmin {
  claim_name: string;
  claim_value: string;
}

/** At most this many first administrators: they are for getting in, not for managing access. */
export const MAX_BOOTSTRAP_ADMINS = 20;

/**
 * Reads a `bootstrapAdmins` list: `[{claim_name, claim_value}]`, nothing else, within the limits
 * of a claim mapping (names 1–256, values 1–1024 characters); throws InvalidInputError otherwise.
 */
export function bootstrapAdminsOf(value: unknown): BootstrapAdmin[] {
  const refuse = (message: string): never => {
    throw new InvalidInputError('invalid_bootstrap_admins', message);
  };
  if (!Array.isArray(value)) return refuse('must be a list of {"claim_name", "claim_value"}');
  if (value.length > MAX_BOOTSTRAP_ADMINS) refuse(`at most ${MAX_BOOTSTRAP_ADMINS} entries`);
  return value.map((entry: unknown, i) => {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      return refuse(`entry ${i} must be an object {"claim_name", "claim_value"}`);
    }
    const { claim_name, claim_value, ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) refuse(`entry ${i} has unknown field(s): ${extra.join(', ')}`);
    if (typeof claim_name !== 'string' || claim_name.length < 1 || claim_name.length > 256) {
      refuse(`entry ${i}: claim_name must be a string of 1 to 256 characters`);
    }
    if (typeof claim_value !== 'string' || claim_value.length < 1 || claim_value.length > 1024) {
      refuse(`entry ${i}: claim_value must be a string of 1 to 1024 characters`);
    }
    return { claim_name: claim_name as string, claim_value: claim_value as string };
  });
}

/** What one reconciliation did: mappings it created, found already there, and removed. */
export interface BootstrapOutcome {
  created: ClaimMapping[];
  existing: ClaimMapping[];
  removed: ClaimMapping[];
}

const ROLE = 'super_admin';

/** Every global mapping (all pages: the scope may hold more than one page). */
async function globalMappings(repo: ClaimMappingRepository): Promise<ClaimMapping[]> {
  const out: ClaimMapping[] = [];
  let cursor: string | undefined;
  do {
    const page = await repo.list(GLOBAL_SCOPE, 500, cursor);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/**
 * Makes the global super_admin mappings of `admins` exist and removes the ones the bootstrap made
 * earlier that are no longer listed (ADR 0089). Idempotent: a mapping already there (made by the
 * bootstrap or by someone) is kept, not duplicated; a mapping the bootstrap did not make is never
 * removed. An empty list removes everything the bootstrap made (its stack's deletion).
 */
export async function reconcileBootstrapAdmins(
  { mappings: repo, roles }: { mappings: ClaimMappingRepository; roles: RoleRepository },
  { admins, now = new Date() }: { admins: readonly BootstrapAdmin[]; now?: Date },
): Promise<BootstrapOutcome> {
  const outcome: BootstrapOutcome = { created: [], existing: [], removed: [] };
  const current = (await globalMappings(repo)).filter((m) => m.role_id === ROLE);
  const byTriple = new Map(current.map((m) => [mappingTriple(m), m]));
  const wanted = new Set<string>();
  for (const admin of admins) {
    const triple = mappingTriple({ ...admin, role_id: ROLE });
    if (wanted.has(triple)) continue;
    wanted.add(triple);
    const there = byTriple.get(triple);
    if (there) {
      outcome.existing.push(there);
      continue;
    }
    try {
      outcome.created.push(
        await createClaimMapping(
          { mappings: repo, roles },
          { scope: GLOBAL_SCOPE, body: { ...admin, role_id: ROLE, created_by: 'bootstrap' }, now },
        ),
      );
    } catch (error) {
      // Made meanwhile (a concurrent run or an administrator): it exists, which is the goal.
      if (!(error instanceof AlreadyExistsError)) throw error;
    }
  }
  for (const mapping of current) {
    if (mapping.created_by !== 'bootstrap' || wanted.has(mappingTriple(mapping))) continue;
    try {
      await repo.delete(mapping);
    } catch (error) {
      // Deleted meanwhile (an administrator, or a concurrent run): gone, which is the goal.
      if (!(error instanceof NotFoundError)) throw error;
    }
    outcome.removed.push(mapping);
  }
  // Token callers read the global mappings from its summary (ADR 0103): a stack deployed before
  // summaries gets it here, on its next deploy.
  await repo.summarize(GLOBAL_SCOPE);
  return outcome;
}
