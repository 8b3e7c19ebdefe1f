import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handleRequest, policyAllows } from '#infra/local/gateway.ts';
import { tokenBuckets } from '#infra/local/rate-limit.ts';

const arn = 'arn:aws:execute-api:local:000000000000:local/v1/GET/api/v1/workspaces';

function policy(
  ...statements: { Effect: 'Allow' | 'Deny'; Resource: string; Action?: string }[]
): APIGatewayAuthorizerResult {
  return {
    principalId: 'p',
    policyDocument: {
      Version: '2012-10-17',
      Statement: statements.map((s) => ({
        Action: s.Action ?? 'execute-api:Invoke',
        Effect: s.Effect,
        Resource: s.Resource,
      })),
    },
  };
}

describe('policyAllows (API Gateway policy evaluation)', () => {
  it('allows a whole-API wildcard', () => {
    expect(
      policyAllows(
        policy({ Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local/v1/*' }),
        arn,
      ),
    ).toBe(true);
  });
  it('needs an Allow that matches', () => {
    expect(
      policyAllows(
        policy({ Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local/v1/POST/*' }),
        arn,
      ),
    ).toBe(false);
    expect(policyAllows(policy(), arn)).toBe(false);
  });
  it('lets an explicit Deny win', () => {
    const p = policy(
      { Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local/v1/*' },
      { Effect: 'Deny', Resource: arn },
    );
    expect(policyAllows(p, arn)).toBe(false);
  });
  it('ignores statements for other actions', () => {
    expect(policyAllows(policy({ Effect: 'Allow', Resource: '*', Action: 's3:GetObject' }), arn)).toBe(false);
  });
});

describe('tokenBuckets', () => {
  it('allows the burst, then asks to wait, then refills at the rate', () => {
    let now = 0;
    const take = tokenBuckets(2, 3, () => now);
    expect([take('a'), take('a'), take('a')]).toEqual([0, 0, 0]);
    expect(take('a')).toBeGreaterThanOrEqual(1);
    expect(take('b')).toBe(0);
    now += 500;
    expect(take('a')).toBe(0);
    expect(take('a')).toBeGreaterThanOrEqual(1);
  });
});

describe("the stage's method throttle (ADR 0111)", () => {
  it('answers 429 with Retry-After for a method over the ceiling, public ones too, before any handler runs', async () => {
    const asked: string[] = [];
    const out = await handleRequest(
      {
        method: 'GET',
        url: '/api/v1/openapi.json',
        headers: {},
        body: Buffer.alloc(0),
        sourceIp: '127.0.0.1',
      },
      {
        maxGatewayBodyBytes: 1024,
        methodThrottle: (operationId) => {
          asked.push(operationId);
          return 2;
        },
      },
    );
    expect(asked).toEqual(['getOpenAPI']);
    expect(out.statusCode).toBe(429);
    expect(out.headers['Retry-After']).toBe('2');
    expect(JSON.parse(String(out.body))).toMatchObject({ code: 429, reason: 'rate_limited' });
  });

  it('keeps one bucket per method: a method at its ceiling leaves the others serving', () => {
    const perMethod = tokenBuckets(1, 2, () => 0);
    expect([perMethod('getWorkspace'), perMethod('getWorkspace'), perMethod('getWorkspace')]).toEqual([
      0, 0, 1,
    ]);
    expect(perMethod('listWorkspaces')).toBe(0);
  });
});
