import { describe, expect, it } from 'vitest';
import { seekCondition } from '#store/items.ts';

// The key condition of the page after a cursor (ADR 0097); no network.
describe('seekCondition', () => {
  it('reads a first page with the listing’s own condition and no start key', () => {
    expect(seekCondition({ partition: 'WS#1', range: { prefix: 'LAYER#s#' } })).toEqual({
      condition: {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': 'WS#1', ':prefix': 'LAYER#s#' },
      },
    });
  });

  it('narrows a prefix to start at the cursor and keeps the cursor as ExclusiveStartKey', () => {
    const start = { PK: 'WS#1', SK: 'LAYER#s#b' };
    expect(seekCondition({ partition: 'WS#1', range: { prefix: 'LAYER#s#' } }, start)).toEqual({
      condition: {
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :low AND :high',
        ExpressionAttributeValues: { ':pk': 'WS#1', ':low': 'LAYER#s#b', ':high': 'LAYER#s#\u{10FFFF}' },
      },
      exclusiveStart: start,
    });
  });

  it('narrows a window newest first from its lower end up to the cursor', () => {
    const start = { PK: 'AUDIT#w', SK: '2026-05#x' };
    const seek = { partition: 'AUDIT#w', range: { from: '2026-01', to: '2026-09#~' }, backwards: true };
    expect(seekCondition(seek, start)?.condition.ExpressionAttributeValues).toEqual({
      ':pk': 'AUDIT#w',
      ':low': '2026-01',
      ':high': '2026-05#x',
    });
  });

  it('ends a listing the cursor has passed and starts one it has not reached', () => {
    const seek = { partition: 'AUDIT#w', range: { from: '2026-03', to: '2026-04#~' }, backwards: true };
    expect(seekCondition(seek, { PK: 'AUDIT#w', SK: '2026-02#x' })).toBeUndefined();
    expect(seekCondition(seek, { PK: 'AUDIT#w', SK: '2026-05#x' })).toEqual(seekCondition(seek));
  });

  it.each([
    [false, '>='],
    [true, '<='],
  ])('seeks a whole GSI1 partition from the cursor inclusively (backwards: %s)', (backwards, op) => {
    const start = { PK: 'ROLE#r', SK: 'ROLE', GSI1PK: 'ROLES', GSI1SK: 'r' };
    expect(seekCondition({ index: true, partition: 'ROLES', backwards }, start)).toEqual({
      condition: {
        IndexName: 'GSI1',
        KeyConditionExpression: `GSI1PK = :pk AND GSI1SK ${op} :seek`,
        ExpressionAttributeValues: { ':pk': 'ROLES', ':seek': 'r' },
      },
      exclusiveStart: start,
    });
  });
});
