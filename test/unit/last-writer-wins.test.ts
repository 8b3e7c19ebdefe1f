import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { NotFoundError, StateConflictError, UnavailableError, VersionMismatchError } from '#domain/errors.ts';
import {
  defaultRetryPolicy,
  isConcurrentModification,
  lastWriterWins,
  lastWriterWinsOn,
  type RetryPolicy,
} from '#domain/last-writer-wins.ts';
import {
  defaultSettings,
  type SettingsKinds,
  type SettingsRepository,
  updateSettings,
} from '#domain/settings.ts';
import {
  deleteWorkspace,
  updateWorkspace,
  type Workspace,
  type WorkspaceRepository,
} from '#domain/workspaces.ts';
import { concurrentModification, isTransactionConflict, transact } from '#store/transactions.ts';

const conflict = () => new StateConflictError('concurrent_modification', 'lost a race');

/** A policy that never sleeps and records the pauses it was asked for. */
function instant(attempts = defaultRetryPolicy.attempts): RetryPolicy & { pauses: number[] } {
  const pauses: number[] = [];
  return {
    attempts,
    delayMs: defaultRetryPolicy.delayMs,
    sleep: async (ms) => {
      pauses.push(ms);
    },
    pauses,
  };
}

describe('lastWriterWinsOn', () => {
  it('applies the first try to what the caller read and every retry to a fresh read', async () => {
    // Prepare
    const seen: string[] = [];
    let reads = 0;
    // Act
    const result = await lastWriterWinsOn(
      'as read',
      async () => `read again ${++reads}`,
      async (latest) => {
        seen.push(latest);
        if (seen.length < 3) throw conflict();
        return latest;
      },
      instant(),
    );
    // Assess
    expect(seen).toEqual(['as read', 'read again 1', 'read again 2']);
    expect(result).toBe('read again 2');
  });
});

describe('lastWriterWins', () => {
  it('tries again after a concurrent modification and returns the first success', async () => {
    // Prepare
    const policy = instant();
    let calls = 0;
    // Act
    const result = await lastWriterWins(async (retry) => {
      calls++;
      if (retry < 3) throw conflict();
      return `won on retry ${retry}`;
    }, policy);
    // Assess
    expect(result).toBe('won on retry 3');
    expect(calls).toBe(4);
    expect(policy.pauses).toHaveLength(3);
  });

  it('gives up after the policy’s attempts and reports the conflict (409)', async () => {
    const policy = instant(5);
    const attempt = vi.fn(async () => {
      throw conflict();
    });
    await expect(lastWriterWins(attempt, policy)).rejects.toMatchObject({
      reason: 'concurrent_modification',
    });
    expect(attempt).toHaveBeenCalledTimes(5);
  });

  it.each([
    ['a 412', new VersionMismatchError('version_mismatch', 'stale')],
    ['a 404', new NotFoundError('layer_not_found', 'gone')],
    ['a 503', new UnavailableError('store_unavailable', 'down')],
    ['another 409', new StateConflictError('built_in_tile_matrix_set', 'fixed')],
    ['a bug', new TypeError('x is undefined')],
  ])('does not retry %s', async (_case, error) => {
    const attempt = vi.fn(async () => {
      throw error;
    });
    await expect(lastWriterWins(attempt, instant())).rejects.toBe(error);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('pauses with jitter that grows and stays bounded', () => {
    for (let retry = 1; retry < 20; retry++) {
      for (let i = 0; i < 50; i++) {
        const ms = defaultRetryPolicy.delayMs(retry);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(Math.min(400, 10 * 2 ** retry));
      }
    }
    const worst = Array.from({ length: defaultRetryPolicy.attempts - 1 }, (_, i) =>
      Math.min(400, 10 * 2 ** (i + 1)),
    ).reduce((a, b) => a + b, 0);
    expect(worst).toBeLessThan(5_000);
  });

  it('recognises only the concurrent-modification conflict', () => {
    expect(isConcurrentModification(conflict())).toBe(true);
    expect(isConcurrentModification(new StateConflictError('workspace_not_empty', 'x'))).toBe(false);
    expect(isConcurrentModification(new UnavailableError('concurrent_modification', 'x'))).toBe(false);
  });
});

const ws = (version: number, extra: Partial<Workspace> = {}): Workspace => ({
  id: '11111111-1111-4111-8111-111111111111',
  name: 'roads',
  status: 'active',
  version,
  created_at: '2024-01-01T00:00:00.000Z',
  updated_at: '2024-01-01T00:00:00.000Z',
  ...extra,
});

/**
 * A workspace repository whose stored version moves on under the caller: each `update` fails
 * `losses` times (another writer got there first), then succeeds.
 */
function racingWorkspaces(losses: number, stored = ws(1)) {
  let current = stored;
  let lost = 0;
  const repo: WorkspaceRepository & { updates: Workspace[] } = {
    updates: [],
    create: async () => {},
    findById: async () => current,
    findByName: async () => current,
    list: async () => ({ items: [] }),
    summaryCounts: async () => ({}),
    update: async (previous, next) => {
      if (previous.version !== current.version || lost < losses) {
        if (lost < losses) {
          lost++;
          // The winner of the race wrote a new version.
          current = { ...current, version: current.version + 1, description: `winner ${lost}` };
        }
        throw conflict();
      }
      repo.updates.push(next);
      current = next;
    },
    deleteEmpty: async (w) => {
      if (w.version !== current.version) throw conflict();
    },
  };
  return repo;
}

describe('updateWorkspace over a repository that loses races', () => {
  it('without If-Match re-reads and re-applies the change until it lands (last writer wins)', async () => {
    // Prepare
    const repo = racingWorkspaces(3);
    // Act
    const updated = await updateWorkspace(
      { workspaces: repo },
      { workspace: ws(1), body: { name: 'renamed' }, ifMatch: undefined },
    );
    // Assess: applied on top of the third winner's version, keeping what that winner wrote.
    expect(updated).toMatchObject({ name: 'renamed', version: 5, description: 'winner 3' });
    expect(repo.updates).toEqual([updated]);
  });

  it('with a matching If-Match, a lost race is the 412 it is (never a 409)', async () => {
    const repo = racingWorkspaces(1);
    await expect(
      updateWorkspace({ workspaces: repo }, { workspace: ws(1), body: { description: 'x' }, ifMatch: '"1"' }),
    ).rejects.toBeInstanceOf(VersionMismatchError);
    expect(repo.updates).toEqual([]);
  });

  it('with a stale If-Match is 412 before any write', async () => {
    const repo = racingWorkspaces(0, ws(4));
    await expect(
      updateWorkspace({ workspaces: repo }, { workspace: ws(4), body: { description: 'x' }, ifMatch: '"3"' }),
    ).rejects.toBeInstanceOf(VersionMismatchError);
    expect(repo.updates).toEqual([]);
  });

  it('is 404 when the workspace went away (or is being deleted) during the race', async () => {
    const repo = racingWorkspaces(1);
    repo.findById = async () => ws(9, { status: 'deleting' });
    await expect(
      updateWorkspace(
        { workspaces: repo },
        { workspace: ws(1), body: { description: 'x' }, ifMatch: undefined },
      ),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('deleteWorkspace without If-Match is not stopped by a concurrent update', async () => {
    const repo = racingWorkspaces(0, ws(2));
    await expect(deleteWorkspace(repo, ws(1), undefined)).resolves.toBeUndefined();
    await expect(deleteWorkspace(repo, ws(1), '"1"')).rejects.toBeInstanceOf(VersionMismatchError);
  });
});

describe('updateSettings over a repository that loses races', () => {
  it('retries without If-Match and refuses (412) with one', async () => {
    let version = 0;
    let losses = 2;
    const saved: number[] = [];
    const repo: SettingsRepository = {
      find: async () => (version ? { document: defaultSettings.wms, version } : undefined),
      save: async (_ws: string, _kind: string, next: { version: number }, previous: { version: number }) => {
        if (losses-- > 0) {
          version++;
          throw conflict();
        }
        if (previous.version !== version) throw conflict();
        version = next.version;
        saved.push(next.version);
      },
      missingTileMatrixSets: async () => [],
    } as unknown as SettingsRepository;
    const doc = structuredClone(defaultSettings.wms) as SettingsKinds['wms'];
    await expect(
      updateSettings({ settings: repo }, { workspaceId: 'w', kind: 'wms', body: doc, ifMatch: undefined }),
    ).resolves.toMatchObject({ version: 3 });
    losses = 1;
    await expect(
      updateSettings({ settings: repo }, { workspaceId: 'w', kind: 'wms', body: doc, ifMatch: '"3"' }),
    ).rejects.toBeInstanceOf(VersionMismatchError);
    expect(saved).toEqual([3]);
  });
});

/** A document client whose TransactWriteItems always fails with `error`. */
function failingClient(error: unknown) {
  return { send: vi.fn(async () => Promise.reject(error)) } as unknown as DynamoDBDocumentClient;
}

function cancelled(...codes: string[]) {
  return Object.assign(new Error('Transaction cancelled'), {
    name: 'TransactionCanceledException',
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

describe('transact: a transaction conflict is a lost race on update paths', () => {
  const item = { item: { Put: { TableName: 't', Item: { PK: 'a', SK: 'b' } } } };

  it.each([
    ['TransactionCanceled with a TransactionConflict reason', cancelled('None', 'TransactionConflict')],
    [
      'TransactionConflictException',
      Object.assign(new Error('conflict'), { name: 'TransactionConflictException' }),
    ],
  ])('%s becomes concurrent_modification when the caller asks', async (_case, error) => {
    expect(isTransactionConflict(error)).toBe(true);
    await expect(
      transact(failingClient(error), [item], concurrentModification('The thing')),
    ).rejects.toSatisfy(isConcurrentModification);
  });

  it('stays a 503 for callers that do not ask (workflow steps retry outages themselves)', async () => {
    await expect(transact(failingClient(cancelled('TransactionConflict')), [item])).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });

  it('a failed condition still wins over a conflict on another item', async () => {
    const guarded = { ...item, onConditionFailed: () => new NotFoundError('layer_not_found', 'gone') };
    await expect(
      transact(
        failingClient(cancelled('ConditionalCheckFailed', 'TransactionConflict')),
        [guarded, item],
        concurrentModification('The thing'),
      ),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a use case retries injected transaction conflicts until the write lands', async () => {
    // Prepare: the store answers TransactionConflict twice (DynamoDB Local never does).
    let failures = 2;
    const send = vi.fn(async () => {
      if (failures-- > 0) throw cancelled('TransactionConflict');
      return {};
    });
    const db = { send } as unknown as DynamoDBDocumentClient;
    const write = () => transact(db, [item], concurrentModification('The thing'));
    // Act
    await lastWriterWins(() => write(), instant());
    // Assess
    expect(send).toHaveBeenCalledTimes(3);
  });
});
