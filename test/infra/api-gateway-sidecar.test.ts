import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_KEY_TAG } from '#domain/usage-keys.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { type BuiltBundles, buildBundles } from '../support/bundles.ts';

// API Gateway's client is a sidecar (ADR 0100): createWorkspace makes a usage key only for the
// first workspace of a pool slot, so its bundle neither carries nor evaluates the client; the
// sidecar beside it loads on the first key made, listed or deleted, and works from a bundle.
const entries = ['functions/workspaces/create-workspace.ts', 'functions/sweeps/sweep.ts'];
let built: BuiltBundles;
let standIn: Server;
const requests: string[] = [];

describe('the API Gateway client sidecar', () => {
  beforeAll(async () => {
    // `probe`: the adapter's module alone, bundled as the functions bundle it, to call it against a stand-in.
    built = buildBundles(entries, { probe: join(repositoryRoot, 'shared/platform/usage-keys.ts') });
    // GET /apikeys as API Gateway answers it: one key of the plan, one of someone else's.
    standIn = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          item: [
            { id: 'k1', name: 'plan-slot-0', createdDate: 1_700_000_000, tags: { [USAGE_KEY_TAG]: 'plan' } },
            { id: 'k2', name: 'plan-other', createdDate: 1_700_000_000, tags: {} },
          ],
        }),
      );
    });
    await new Promise<void>((r) => standIn.listen(0, '127.0.0.1', r));
  }, 120_000);
  afterAll(async () => {
    await new Promise((r) => standIn.close(r));
    built.remove();
  });

  it('leaves the client out of createWorkspace and the sweep, and stages it beside both', () => {
    for (const entry of entries) {
      const code = readFileSync(built.bundle(entry), 'utf8');
      // The client's request paths and signing name are only in the sidecar.
      expect(code, entry).not.toContain('/usageplans');
      expect(code, entry).not.toContain('"apigateway"');
      expect(built.staged(entry), entry).toContain('api-gateway.sidecar.mjs');
    }
    const beside = dirname(built.bundle(entries[0] as string));
    const sidecar = readFileSync(join(beside, 'api-gateway.sidecar.mjs'), 'utf8');
    expect(sidecar).toContain('/usageplans');
  });

  it('loads the sidecar from beside a bundle on first use and lists through it', async () => {
    const env: Record<string, string> = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_API_GATEWAY: `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`,
    };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      const { ApiGatewayUsageKeys } = (await import(pathToFileURL(built.bundle('probe')).href)) as {
        ApiGatewayUsageKeys: new (plan: string) => { list(): Promise<{ id: string; createdAt: Date }[]> };
      };
      const found = await new ApiGatewayUsageKeys('plan').list();
      expect(found).toEqual([{ id: 'k1', createdAt: new Date(1_700_000_000_000) }]);
      expect(requests).toEqual([expect.stringMatching(/^GET \/apikeys\?/)]);
      expect(built.staged('probe')).toContain('api-gateway.sidecar.mjs');
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
