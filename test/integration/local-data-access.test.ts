import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { actionsOf } from '#infra/local/data-access.ts';

describe('local data access check: the IAM actions of a DynamoDB command', () => {
  it.each([
    ['GetCommand', {}, ['GetItem']],
    ['QueryCommand', {}, ['Query']],
    ['BatchWriteCommand', {}, ['BatchWriteItem']],
    ['BatchGetItemCommand', {}, ['BatchGetItem']],
    ['ScanCommand', {}, ['Scan']],
  ])('%s needs %j', (name, input, expected) => {
    expect(actionsOf(name, input)).toEqual(expected);
  });

  it('a transaction needs the action of each of its items', () => {
    const input = {
      TransactItems: [{ Put: {} }, { Update: {} }, { ConditionCheck: {} }, { Update: {} }, { Delete: {} }],
    };
    expect(actionsOf('TransactWriteCommand', input).sort()).toEqual(
      ['ConditionCheckItem', 'DeleteItem', 'PutItem', 'UpdateItem'].sort(),
    );
    expect(actionsOf('TransactWriteCommand', { TransactItems: [{ Update: {} }] })).toEqual(['UpdateItem']);
  });

  it('an unknown command is named as is (so it is never silently allowed)', () => {
    expect(actionsOf('DescribeTableCommand', {})).toEqual(['DescribeTableCommand']);
  });
});

describe('local data access check against DynamoDB Local', () => {
  it('refuses an undeclared action inside a handler scope and allows declared ones (and calls outside any scope)', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { DynamoDBDocumentClient, GetCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { installDataAccessCheck, withDataAccess } = await import('#infra/local/data-access.ts');
    const host = inject('host');
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: host.dynamoEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    installDataAccessCheck(client);
    const key = { PK: `ACCESSCHECK#${randomUUID()}`, SK: 'X' };
    const put = () => client.send(new PutCommand({ TableName: host.tableName, Item: key }));
    const get = () => client.send(new GetCommand({ TableName: host.tableName, Key: key }));

    await expect(withDataAccess('readOnly', ['GetItem'], put)).rejects.toThrow(
      /readOnly is not allowed dynamodb:PutItem/,
    );
    expect((await withDataAccess('readOnly', ['GetItem'], get)).Item).toBeUndefined();
    await put();
    expect((await withDataAccess('readOnly', ['GetItem'], get)).Item).toEqual(key);
    await withDataAccess('writer', ['PutItem'], put);
  });
});
