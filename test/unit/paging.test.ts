import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#domain/errors.ts';
import { decodeCursor, encodeCursor } from '#store/paging.ts';

describe('cursors', () => {
  it('round-trips a LastEvaluatedKey', () => {
    const key = { PK: 'WS#1', SK: 'APIKEY#2' };
    expect(decodeCursor(encodeCursor(key), { PK: { equals: 'WS#1' }, SK: { prefix: 'APIKEY#' } })).toEqual(
      key,
    );
  });

  it('is absent when there is no next page', () => {
    expect(encodeCursor(undefined)).toBeUndefined();
    expect(decodeCursor(undefined, { PK: true })).toBeUndefined();
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    ['an array', Buffer.from('[1]').toString('base64url')],
    ['a foreign key', Buffer.from(JSON.stringify({ PK: 'x', GSI9: 'y' })).toString('base64url')],
    ['a non-string value', Buffer.from(JSON.stringify({ PK: 1, SK: 'y' })).toString('base64url')],
    ['a missing key', Buffer.from(JSON.stringify({ PK: 'x' })).toString('base64url')],
  ])('refuses %s with a 400-class error', (_case, cursor) => {
    expect(() => decodeCursor(cursor, { PK: true, SK: true })).toThrow(InvalidInputError);
  });
});

describe('cursor shapes', () => {
  const shape = { PK: { equals: 'WS#1' }, SK: { prefix: 'APIKEY#' } } as const;
  it.each([
    ['another partition', { PK: 'WS#2', SK: 'APIKEY#x' }],
    ['another item type', { PK: 'WS#1', SK: 'CLAIMMAP#x' }],
  ])('refuses a cursor of %s', (_case, key) => {
    expect(() => decodeCursor(encodeCursor(key), shape)).toThrow(InvalidInputError);
  });
});
