import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimMapping } from '#domain/claim-mappings.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { hostDynamo, useHostStore } from '../support/store.ts';

// The claim mapping summaries (ADR 0103) against the run's DynamoDB Local: every create and delete
// keeps its scope's summary equal to the scope's mappings, concurrent writers included; a scope
// whose mappings are older than summaries gets one from them; a scope too large overflows.

type Modules = {
  keys: typeof import('#store/keys.ts');
  summaries: typeof import('#store/claim-summaries.ts');
  repo: typeof import('#store/claim-mappings-repository.ts');
  mappings: import('#store/claim-mappings-repository.ts').DynamoClaimMappingRepository;
  roles: import('#store/roles-repository.ts').DynamoRoleRepository;
  workspaces: import('#store/workspaces-repository.ts').DynamoWorkspaceRepository;
  domain: typeof import('#domain/claim-mappings.ts');
  workspaceDomain: typeof import('#domain/workspaces.ts');
};
let m: Modules;
let table: string;
const db = hostDynamo();

beforeAll(async () => {
  useHostStore();
  table = process.env.TABLE_NAME as string;
  const repo = await import('#store/claim-mappings-repository.ts');
  m = {
    keys: await import('#store/keys.ts'),
    summaries: await import('#store/claim-summaries.ts'),
    repo,
    mappings: new repo.DynamoClaimMappingRepository(),
    roles: new (await import('#store/roles-repository.ts')).DynamoRoleRepository(),
    workspaces: new (await import('#store/workspaces-repository.ts')).DynamoWorkspaceRepository(),
    domain: await import('#domain/claim-mappings.ts'),
    workspaceDomain: await import('#domain/workspaces.ts'),
  };
});

afterAll(() => db.destroy());

const workspace = (): Promise<Workspace> =>
  m.workspaceDomain.createWorkspace(
    { workspaces: m.workspaces },
    { body: { name: `cs-${randomUUID().slice(0, 13)}` } },
  );

function create(ws: Workspace, value: string, role = 'viewer', priority = 0): Promise<ClaimMapping> {
  return m.domain.createClaimMapping(
    { mappings: m.mappings, roles: m.roles },
    { scope: ws.id, body: { claim_name: 'groups', claim_value: value, role_id: role, priority } },
  );
}

async function summaryItem(ws: Workspace) {
  const out = await db.send(
    new GetCommand({ TableName: table, Key: m.keys.keys.claimMappingSummary(ws.id), ConsistentRead: true }),
  );
  return out.Item;
}

/** Sets (or, with undefined, removes) the count of a scope's summary behind the repository's back. */
async function setCount(ws: Workspace, count: number | undefined) {
  await db.send(
    new UpdateCommand({
      TableName: table,
      Key: m.keys.keys.claimMappingSummary(ws.id),
      UpdateExpression: count === undefined ? 'REMOVE #c' : 'SET #c = :n',
      ExpressionAttributeNames: { '#c': 'count' },
      ...(count === undefined ? {} : { ExpressionAttributeValues: { ':n': count } }),
    }),
  );
}

/** The summary's rules, in a stable order, against the scope's mappings as the Query reads them. */
async function compare(ws: Workspace) {
  const order = (rules: { claim_value: string; role_id: string; priority: number }[]) =>
    rules.map((r) => `${r.claim_value}/${r.role_id}/${r.priority}`).sort();
  const summary = m.summaries.summaryRules(await summaryItem(ws));
  return { summary: summary && order(summary), mappings: order(await m.mappings.all(ws.id)) };
}

describe('claim mapping summaries (ADR 0103)', () => {
  it('follows every create and delete of its scope, and resolves the same role as the mappings', async () => {
    const ws = await workspace();
    expect(await summaryItem(ws)).toBeUndefined();
    const a = await create(ws, 'readers');
    const b = await create(ws, 'writers', 'editor', 5);
    await create(ws, 'owners', 'admin', 1);
    let state = await compare(ws);
    expect(state.summary).toEqual(state.mappings);
    expect(state.summary).toHaveLength(3);
    const claims = { groups: ['readers', 'writers'] };
    const rules = m.summaries.summaryRules(await summaryItem(ws)) ?? [];
    expect(m.domain.resolveRole(rules, claims)).toBe('editor');
    expect(m.domain.resolveRole(rules, claims)).toBe(
      m.domain.resolveRole(await m.mappings.all(ws.id), claims),
    );

    await m.domain.deleteClaimMapping({ mappings: m.mappings }, { scope: ws.id, mappingId: b.id });
    await m.domain.deleteClaimMapping({ mappings: m.mappings }, { scope: ws.id, mappingId: a.id });
    state = await compare(ws);
    expect(state.summary).toEqual(state.mappings);
    expect(state.summary).toEqual(['owners/admin/1']);
    // Each write counted once.
    expect((await summaryItem(ws))?.writes).toBe(5);
  });

  it('keeps every one of twelve concurrent creates and then six concurrent deletes', async () => {
    const ws = await workspace();
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => create(ws, `group-${i}`)));
    let state = await compare(ws);
    expect(state.summary).toHaveLength(12);
    expect(state.summary).toEqual(state.mappings);
    await Promise.all(
      made
        .slice(0, 6)
        .map((x) => m.domain.deleteClaimMapping({ mappings: m.mappings }, { scope: ws.id, mappingId: x.id })),
    );
    state = await compare(ws);
    expect(state.summary).toHaveLength(6);
    expect(state.summary).toEqual(state.mappings);
  });

  it('builds the summary of a scope whose mappings are older than summaries, from its mappings', async () => {
    const ws = await workspace();
    await create(ws, 'old-1');
    await create(ws, 'old-2', 'editor');
    // As a table written before summaries: the mappings are there, their summary is not.
    await db.send(new DeleteCommand({ TableName: table, Key: m.keys.keys.claimMappingSummary(ws.id) }));
    expect(m.summaries.summaryRules(await summaryItem(ws))).toBeUndefined();
    await m.mappings.summarize(ws.id);
    let state = await compare(ws);
    expect(state.summary).toEqual(['old-1/viewer/0', 'old-2/editor/0']);
    // Again: a summary that exists is left as it is.
    const writes = (await summaryItem(ws))?.writes;
    await m.mappings.summarize(ws.id);
    expect((await summaryItem(ws))?.writes).toBe(writes);

    // The next write of such a scope builds it too.
    await db.send(new DeleteCommand({ TableName: table, Key: m.keys.keys.claimMappingSummary(ws.id) }));
    await create(ws, 'new-1', 'admin');
    state = await compare(ws);
    expect(state.summary).toEqual(['new-1/admin/0', 'old-1/viewer/0', 'old-2/editor/0']);
  });

  it('overflows past its byte budget (callers then query) and comes back when the scope shrinks', async () => {
    const ws = await workspace();
    const long = (i: number) => `${String(i).padStart(4, '0')}-${'x'.repeat(1000)}`;
    const count = Math.ceil(m.repo.SUMMARY_MAX_BYTES / 1000) + 1;
    const made: ClaimMapping[] = [];
    for (let i = 0; i < count; i++) made.push(await create(ws, long(i)));
    const item = await summaryItem(ws);
    expect(item?.overflow).toBe(true);
    expect(item?.mappings).toBeUndefined();
    expect(m.summaries.summaryRules(item)).toBeUndefined();
    for (const x of made.slice(0, 10))
      await m.domain.deleteClaimMapping({ mappings: m.mappings }, { scope: ws.id, mappingId: x.id });
    const state = await compare(ws);
    expect(state.summary).toHaveLength(count - 10);
    expect(state.summary).toEqual(state.mappings);
  });

  it('is not rewritten by a refused create (a triple that exists)', async () => {
    const ws = await workspace();
    await create(ws, 'dup');
    const writes = (await summaryItem(ws))?.writes;
    await expect(create(ws, 'dup')).rejects.toMatchObject({ reason: 'claim_mapping_exists' });
    expect((await summaryItem(ws))?.writes).toBe(writes);
    expect((await compare(ws)).summary).toEqual(['dup/viewer/0']);
  });

  it('counts its scope’s mappings, and refuses one more past the limit without writing anything', async () => {
    const ws = await workspace();
    const a = await create(ws, 'c-1');
    await create(ws, 'c-2');
    expect((await summaryItem(ws))?.count).toBe(2);
    await m.domain.deleteClaimMapping({ mappings: m.mappings }, { scope: ws.id, mappingId: a.id });
    expect((await summaryItem(ws))?.count).toBe(1);

    // The scope is full (its count set as 500 creates would have left it: writing 500 takes long).
    await setCount(ws, m.repo.MAX_MAPPINGS_PER_SCOPE);
    const before = await summaryItem(ws);
    await expect(create(ws, 'c-3')).rejects.toMatchObject({ reason: 'claim_mapping_limit' });
    expect(await summaryItem(ws)).toEqual(before);
    expect((await m.mappings.all(ws.id)).map((x) => x.claim_value)).toEqual(['c-2']);
    expect((await m.workspaces.findById(ws.id))?.claim_mapping_count).toBe(1);

    // A summary without a count (written before counts) is counted from the Query again.
    await setCount(ws, undefined);
    await create(ws, 'c-3');
    expect((await summaryItem(ws))?.count).toBe(2);
    expect((await compare(ws)).summary).toEqual(['c-2/viewer/0', 'c-3/viewer/0']);
  });
});
