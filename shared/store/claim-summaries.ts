/**
 * A scope's claim mapping summary as the readers see it (ADR 0103): the rules role resolution
 * reads, kept apart from the repository so the authorizer's lookup needs nothing else of it.
 */
import type { RoleRule } from '#domain/claim-mappings.ts';

/** The summary's rule of a mapping: only what role resolution reads. */
export function ruleOf(m: RoleRule): RoleRule {
  return { claim_name: m.claim_name, claim_value: m.claim_value, role_id: m.role_id, priority: m.priority };
}

/**
 * The rules of a stored summary item by mapping id, or undefined when it is unusable: missing,
 * overflowed or malformed (the caller then queries the scope's mappings).
 */
export function summaryMappings(
  item: Record<string, unknown> | undefined,
): Record<string, RoleRule> | undefined {
  if (!item || item.overflow === true) return undefined;
  const mappings = item.mappings;
  if (!mappings || typeof mappings !== 'object' || Array.isArray(mappings)) return undefined;
  const rules: Record<string, RoleRule> = {};
  for (const [id, value] of Object.entries(mappings as Record<string, unknown>)) {
    const r = value as Partial<RoleRule> | null;
    if (
      !r ||
      typeof r.claim_name !== 'string' ||
      typeof r.claim_value !== 'string' ||
      typeof r.role_id !== 'string' ||
      typeof r.priority !== 'number'
    )
      return undefined;
    rules[id] = ruleOf(r as RoleRule);
  }
  return rules;
}

/** The rules of a stored summary item (see `summaryMappings`), in no particular order. */
export function summaryRules(item: Record<string, unknown> | undefined): RoleRule[] | undefined {
  const rules = summaryMappings(item);
  return rules && Object.values(rules);
}
