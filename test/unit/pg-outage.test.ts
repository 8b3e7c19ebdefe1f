import { describe, expect, it } from 'vitest';
import { isPostgresOutage } from '#datasources/pg-driver.ts';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const WORDS = /Connection terminated/i;

describe('isPostgresOutage: one rule for both PostgreSQL adapters (ADR 0034)', () => {
  it.each([
    ['a refused connection', coded('ECONNREFUSED')],
    ['a reset', coded('ECONNRESET')],
    ['a name that does not resolve', coded('ENOTFOUND')],
    ['connection_exception (class 08)', coded('08006')],
    ['an admin shutdown', coded('57P01')],
    ['cannot_connect_now (starting up)', coded('57P03')],
    ['too_many_connections', coded('53300')],
    ['the driver’s own words', new Error('Connection terminated unexpectedly')],
    ['an AggregateError of outages (several addresses)', new AggregateError([coded('ECONNREFUSED')], 'x')],
  ])('is an outage: %s', (_case, error) => {
    expect(isPostgresOutage(error, WORDS)).toBe(true);
  });

  it.each([
    ['a refused login', coded('28P01')],
    ['a missing privilege', coded('42501')],
    ['a syntax error', coded('42601')],
    ['words the caller did not name', new Error('Query read timeout')],
    ['an AggregateError of anything else', new AggregateError([coded('42601')], 'x')],
    ['something not an Error', { code: 'ECONNREFUSED' }],
  ])('is not an outage: %s', (_case, error) => {
    expect(isPostgresOutage(error, WORDS)).toBe(false);
  });
});
