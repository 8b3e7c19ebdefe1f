import { describe, expect, it } from 'vitest';
import { endSession, MAX_LOGOUT_PAIRS, type Session } from '#domain/sessions.ts';

/*
 * Logout ends the whole session (ADR 0109): the pair of the cookie, the pairs a refresh replaced
 * that are still in their grace, and the pairs that replaced it. Each deletion answers the pair as
 * it was, with its links, so the walk follows what the store actually held.
 */

const now = new Date('2026-01-01T12:00:00Z');
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

function pair(hash: string, links: Partial<Session> = {}): Session {
  return {
    session_id: 's1',
    token_hash: hash,
    csrf_hash: `csrf-${hash}`,
    credential: { type: 'apikey', key_hash: 'k', key_id: 'id' },
    expires_at: at(3600),
    idle_expires_at: at(1800),
    created_at: at(-60),
    ...links,
  };
}

/** A store of pairs whose `delete` answers and removes one, recording what was asked. */
function store(pairs: Session[]) {
  const held = new Map(pairs.map((p) => [p.token_hash, p]));
  const asked: string[] = [];
  return {
    asked,
    held,
    async delete(hash: string) {
      asked.push(hash);
      const found = held.get(hash);
      held.delete(hash);
      return found;
    },
  };
}

/** z ← a ← b ← c ← d: z and a past their grace, b and c rotated within it, d the current pair. */
function chain(): Session[] {
  return [
    pair('z', { rotated_at: at(-200), grace_until: at(-170), next_token_hash: 'a' }),
    pair('a', {
      rotated_at: at(-50),
      grace_until: at(-20),
      previous_token_hash: 'z',
      next_token_hash: 'b',
    }),
    pair('b', { rotated_at: at(-10), grace_until: at(20), previous_token_hash: 'a', next_token_hash: 'c' }),
    pair('c', { rotated_at: at(-5), grace_until: at(25), previous_token_hash: 'b', next_token_hash: 'd' }),
    pair('d', { previous_token_hash: 'c' }),
  ];
}

describe('endSession', () => {
  it('from the current pair: ends it and every pair before it still in grace, and stops at the first past it', async () => {
    const s = store(chain());
    expect(await endSession(s, 'd', now)).toBe(4);
    expect([...s.held.keys()]).toEqual(['z']);
    expect(s.asked).not.toContain('z');
  });

  it('from a pair in its grace: ends the pairs that replaced it too', async () => {
    const s = store(chain());
    await endSession(s, 'b', now);
    expect([...s.held.keys()]).toEqual(['z']);
  });

  it('ends a single pair, and asks nothing more for a cookie that is gone', async () => {
    const one = store([pair('x')]);
    expect(await endSession(one, 'x', now)).toBe(1);
    expect(one.asked).toEqual(['x']);
    const none = store([]);
    expect(await endSession(none, 'gone', now)).toBe(0);
    expect(none.asked).toEqual(['gone']);
  });

  it('stops after a bounded number of pairs, whatever the links say', async () => {
    const looped = Array.from({ length: MAX_LOGOUT_PAIRS + 10 }, (_, i) =>
      pair(`p${i}`, { next_token_hash: `p${i + 1}`, rotated_at: at(-1), grace_until: at(29) }),
    );
    const s = store(looped);
    expect(await endSession(s, 'p0', now)).toBe(MAX_LOGOUT_PAIRS);
  });
});
