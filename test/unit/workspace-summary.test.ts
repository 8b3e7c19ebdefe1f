import { describe, expect, it } from 'vitest';
import { apiKeyExpiry } from '#domain/expiry.ts';
import { countChange, countsAt, countsOf, isSummaryField, summaryOf } from '#domain/workspace-summary.ts';

/* The workspace summary's counting rules (ADR 0137). */

const DAY = 86_400_000;

describe('what each entity counts as', () => {
  it('counts a layer by its state, a key by revocation, an import by status', () => {
    expect(countsOf('layer', { enabled: true })).toEqual({ layers_enabled: 1 });
    expect(countsOf('layer', { enabled: false })).toEqual({ layers_disabled: 1 });
    expect(countsOf('api_key', { revoked: false })).toEqual({ api_keys_active: 1 });
    expect(countsOf('api_key', { revoked: true })).toEqual({ api_keys_revoked: 1 });
    expect(countsOf('import', { status: 'published' })).toEqual({ imports_published: 1 });
    // A status the summary doesn't know counts nowhere rather than under a made-up field.
    expect(countsOf('import', { status: 'exploded' })).toEqual({});
  });

  it('moves a count between fields on a transition, and to nothing on a delete', () => {
    expect(countChange('layer', { enabled: false }, { enabled: true })).toEqual({
      layers_enabled: 1,
      layers_disabled: -1,
    });
    expect(countChange('import', { status: 'queued' }, { status: 'running' })).toEqual({
      imports_running: 1,
      imports_queued: -1,
    });
    expect(countChange('style', { name: 'a' }, { name: 'b' })).toEqual({});
    expect(countChange('service', { id: 's' }, undefined)).toEqual({ services: -1 });
  });

  it('dates an expiring key by the day the table removes its record, and stops counting it that day', () => {
    const expiresAt = '2027-01-10T12:00:00.000Z';
    const record = apiKeyExpiry({ expires_at: expiresAt })?.record as number;
    const day = Math.floor(record / 86_400);
    const counts = countsOf('api_key', { revoked: false, expires_at: expiresAt });
    expect(counts).toEqual({ [`api_keys_active_d${day}`]: 1 });
    expect(Object.keys(counts).every(isSummaryField)).toBe(true);
    const dayStart = day * DAY;
    expect(countsAt(counts, new Date(dayStart - 1))).toEqual({ api_keys_active: 1 });
    expect(countsAt(counts, new Date(dayStart))).toEqual({});
    expect(countsAt(counts, new Date(dayStart + DAY))).toEqual({});
  });

  it('only names of counted fields are counter fields', () => {
    expect(isSummaryField('layers_enabled')).toBe(true);
    expect(isSummaryField('api_keys_revoked_d20100')).toBe(true);
    for (const other of ['writes', 'shard', 'entity', 'PK', 'api_keys_active_dx', 'imports_']) {
      expect(isSummaryField(other), other).toBe(false);
    }
  });
});

describe('the summary', () => {
  it('adds the states up to totals and lists every import status', () => {
    const s = summaryOf(
      'ws',
      {
        services: 2,
        layers_enabled: 3,
        layers_disabled: 1,
        imports_failed: 2,
        api_keys_revoked: 1,
        claim_mappings: 4,
      },
      new Date(),
    );
    expect(s.layers).toEqual({ total: 4, enabled: 3, disabled: 1 });
    expect(s.imports.total).toBe(2);
    expect(s.imports.by_status.failed).toBe(2);
    expect(s.imports.by_status.published).toBe(0);
    expect(s.api_keys).toEqual({ total: 1, active: 0, revoked: 1 });
    expect(s.claim_mappings).toBe(4);
  });
});
