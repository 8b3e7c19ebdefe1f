import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '#domain/audit.ts';
import { catalogEventsOf } from '#domain/catalog-events.ts';
import { auditPutFor, changesOf } from '#store/audit-records.ts';
import { runInChange } from '#store/change-context.ts';
import { auditRecordOf } from '#store/change-stream.ts';
import { describeKey, entities, keys } from '#store/keys.ts';
import { itemAbsent } from '#store/table.ts';

const T = 'geoplane';
const WS = '6a1d3b2e-0000-4000-8000-000000000001';
const put = (item: Record<string, unknown>, condition?: string) => ({
  Put: { TableName: T, Item: item, ...(condition ? { ConditionExpression: condition } : {}) },
});

describe('describeKey (the entity a key names)', () => {
  it.each([
    [keys.workspace(WS), { entity: 'Workspace', id: WS, workspaceId: WS }],
    [keys.layer(WS, 'svc', 'lyr'), { entity: 'Layer', id: 'lyr', workspaceId: WS, parentId: 'svc' }],
    [keys.apiKey(undefined, 'k1'), { entity: 'ApiKey', id: 'k1' }],
    [keys.rolePolicy('r1', 'p1'), { entity: 'RolePolicy', id: 'p1', parentId: 'r1' }],
    [keys.tileMatrixSet('tms'), { entity: 'TileMatrixSet', id: 'tms' }],
    [keys.deletion('d1'), { entity: 'DeletionOperation', id: 'd1' }],
  ])('names %j', (key, ref) => expect(describeKey(key)).toEqual(ref));

  it.each([
    keys.workspaceName('x'),
    keys.serviceName(WS, 'x'),
    keys.publicId(WS, 'x'),
    keys.apiKeyHash('ab'),
    keys.styleAssetRef(WS, 'a', 's'),
    keys.importEvent(WS, 'i', 1),
    keys.activeDeletions(WS),
    keys.session('h'),
    keys.deletionPlan('d1'),
    keys.auditRecord(WS, '2026-01-01T00:00:00.000Z', 'x'),
  ])('names no entity for bookkeeping %j', (key) => expect(describeKey(key)).toBeUndefined());
});

describe('changesOf (what a transaction changed)', () => {
  it('reads creations, versioned updates and deletions, and their versions', () => {
    const changes = changesOf([
      put({ ...keys.service(WS, 's1'), version: 1, status: 'active' }, itemAbsent),
      put({ ...keys.serviceName(WS, 'name'), service_id: 's1' }, itemAbsent),
      {
        Update: {
          TableName: T,
          Key: keys.workspace(WS),
          UpdateExpression: 'SET #n = :name, #v = :next, updated_at = :at',
          ExpressionAttributeNames: { '#n': 'name', '#v': 'version' },
          ExpressionAttributeValues: { ':name': 'x', ':next': 4, ':at': 'now' },
        },
      },
      {
        Update: {
          TableName: T,
          Key: keys.role('r1'),
          UpdateExpression: 'SET #s = :retired, updated_at = :now, #v = #v + :one REMOVE GSI1PK',
          ConditionExpression: '#s = :active AND #v = :v',
          ExpressionAttributeNames: { '#s': 'status', '#v': 'version' },
          ExpressionAttributeValues: { ':retired': 'retired', ':active': 'active', ':one': 1, ':v': 6 },
        },
      },
      { Delete: { TableName: T, Key: keys.layer(WS, 's1', 'l1') } },
    ]);
    expect(changes).toEqual([
      { type: 'service', id: 's1', workspace_id: WS, action: 'created', version: 1, status: 'active' },
      { type: 'workspace', id: WS, workspace_id: WS, action: 'updated', version: 4 },
      { type: 'role', id: 'r1', action: 'updated', version: 7, status: 'retired' },
      { type: 'layer', id: 'l1', workspace_id: WS, parent_id: 's1', action: 'deleted' },
    ]);
  });

  it('ignores counter and progress updates, and a deletion or import write that sets no status', () => {
    expect(
      changesOf([
        {
          Update: {
            TableName: T,
            Key: keys.style(WS, 'st'),
            UpdateExpression: 'ADD layer_ref_count :one',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
        {
          Update: {
            TableName: T,
            Key: keys.deletion('d1'),
            UpdateExpression:
              'SET checkpoint_to = :to, updated_at = :now, write_units = if_not_exists(write_units, :z) + :w',
            ExpressionAttributeValues: { ':to': 'x', ':now': 'n', ':z': 0, ':w': 1 },
          },
        },
        put({ ...keys.importJob(WS, 'i1'), version: 5, status: 'loading' }),
      ]),
    ).toEqual([]);
  });

  it("counts an import's job only on a step its history records", () => {
    const changes = changesOf([
      put({ ...keys.importJob(WS, 'i1'), version: 5, status: 'ready' }),
      put({ ...keys.importEvent(WS, 'i1', 5), entity: entities.importEvent }),
    ]);
    expect(changes).toEqual([
      { type: 'import', id: 'i1', workspace_id: WS, action: 'updated', version: 5, status: 'ready' },
    ]);
  });
});

describe('the audit record and its events', () => {
  it('is appended for a change, attributed to the change context, and read back off the stream', () => {
    const items = [put({ ...keys.layerGroup(WS, 'g1'), version: 1 }, itemAbsent)];
    const audit = runInChange(
      {
        principalId: 'apikey:k',
        authMethod: 'apikey',
        subject: 'ci',
        operation: 'createLayerGroup',
        requestId: 'r-1',
      },
      () => auditPutFor(items, { days: 90 }),
    );
    const item = audit?.Put?.Item as Record<string, unknown>;
    expect(item).toMatchObject({
      entity: 'AuditRecord',
      workspace_id: WS,
      operation: 'createLayerGroup',
      principal: { id: 'apikey:k', auth_method: 'apikey', subject: 'ci' },
      request_id: 'r-1',
      outcome: 'succeeded',
    });
    expect(item.PK).toBe(keys.auditPartition(WS));
    expect(Number(item.expires_at_epoch) - Date.now() / 1000).toBeGreaterThan(89 * 86400);
    expect(auditPutFor([put({ ...keys.session('h') })], { days: 90 })).toBeUndefined();

    // What the stream reader sees: the insertion of that item, as DynamoDB marshals it.
    const image = {
      entity: { S: 'AuditRecord' },
      id: { S: item.id as string },
      at: { S: item.at as string },
      operation: { S: 'createLayerGroup' },
      request_id: { S: 'r-1' },
      outcome: { S: 'succeeded' },
      principal: { M: { id: { S: 'apikey:k' }, auth_method: { S: 'apikey' } } },
      changes: {
        L: [
          {
            M: { type: { S: 'layer_group' }, id: { S: 'g1' }, action: { S: 'created' }, version: { N: '1' } },
          },
        ],
      },
      workspace_id: { S: WS },
    };
    const record = auditRecordOf({ eventName: 'INSERT', dynamodb: { NewImage: image } }) as AuditRecord;
    expect(auditRecordOf({ eventName: 'MODIFY', dynamodb: { NewImage: image } })).toBeUndefined();
    expect(
      auditRecordOf({ eventName: 'INSERT', dynamodb: { NewImage: { entity: { S: 'Layer' } } } }),
    ).toBeUndefined();
    const [event, ...rest] = catalogEventsOf(record);
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      source: 'geoplane',
      detailType: 'Layer Group Created',
      detail: { event_id: `${item.id}:0`, type: 'layer_group', id: 'g1', version: 1, workspace_id: WS },
    });
    expect(catalogEventsOf({ ...record, outcome: 'refused' })).toEqual([]);
  });
});
