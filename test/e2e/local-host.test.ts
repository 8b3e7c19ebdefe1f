import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { type HostProcess, startHostProcess } from '../support/host-process.ts';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

function portOpen(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      r(true);
    });
    s.once('error', () => r(false));
  });
}

async function mintToken(dataDir: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'infra/local/token.ts', ...args], {
    cwd: root,
    env: { ...process.env, GEOPLANE_DATA_DIR: dataDir },
  });
  return stdout.trim();
}

describe('the local host (npm start) on its own data dir', () => {
  let host: HostProcess | undefined;
  afterAll(async () => {
    // Ctrl-C, not kill -9: the host stops the DynamoDB Local it started (a killed host leaves it).
    await host?.stop('SIGINT');
    if (host) rmSync(host.dataDir, { recursive: true, force: true });
  });

  it('bootstraps once, keeps data across restarts, mints tokens and stops DynamoDB on Ctrl-C', async () => {
    // First start: DynamoDB Local under the data dir, a bootstrap key printed once and saved.
    host = await startHostProcess();
    const { dataDir } = host;
    const bootstrap = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8'));
    expect(bootstrap).toEqual({ url: host.url, api_key: expect.stringMatching(/^gpk_[A-Za-z0-9_-]{43}$/) });
    expect(statSync(join(dataDir, 'bootstrap.json')).mode & 0o077).toBe(0);
    expect(host.output()).toContain(bootstrap.api_key);
    expect(existsSync(join(dataDir, 'dynamodb'))).toBe(true);

    const opts = { baseUrl: host.url, dataDir, headers: { 'X-API-Key': bootstrap.api_key } };
    const demo = await call('GET', '/workspaces/demo', opts);
    expect(demo.status).toBe(200);
    const created = await call('POST', '/workspaces', { ...opts, body: { name: 'kept-across-restarts' } });
    expect(created.status).toBe(201);

    // npm run token: a super_admin JWT and a workspace viewer JWT from the local issuer.
    const superToken = await mintToken(dataDir, '--role', 'super_admin');
    const viewerToken = await mintToken(dataDir, '--workspace', 'demo', '--role', 'viewer');
    const asSuper = await call('GET', '/workspaces', {
      baseUrl: host.url,
      dataDir,
      headers: { Authorization: `Bearer ${superToken}` },
    });
    expect(asSuper.status).toBe(200);
    const asViewer = await call('GET', '/workspaces/demo', {
      baseUrl: host.url,
      dataDir,
      headers: { Authorization: `Bearer ${viewerToken}` },
    });
    expect(asViewer.status).toBe(200);
    const viewerWrite = await call('PUT', '/workspaces/demo', {
      baseUrl: host.url,
      dataDir,
      headers: { Authorization: `Bearer ${viewerToken}` },
      body: { description: 'no' },
    });
    expect(viewerWrite.status).toBe(403);
    await expect(mintToken(dataDir, '--role', 'admin')).rejects.toThrow();
    const jwks = await call('GET', '/../../local-issuer/.well-known/jwks.json', {
      baseUrl: host.url,
      dataDir,
    });
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.body.keys[0]).not.toHaveProperty('d');

    // Ctrl-C stops the host and the DynamoDB Local it started.
    const javaPort = Number(/DynamoDB\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(host.output())?.[1]);
    expect(javaPort).toBeGreaterThan(0);
    expect(await portOpen(javaPort)).toBe(true);
    await host.stop('SIGINT');
    expect(host.child.exitCode).toBe(0);
    expect(await portOpen(javaPort)).toBe(false);

    // Second start on the same data dir: nothing re-created, the key not printed again, data kept.
    host = await startHostProcess({ GEOPLANE_DATA_DIR: dataDir });
    expect(host.output()).not.toContain(bootstrap.api_key);
    const again = await call('GET', '/workspaces/kept-across-restarts', {
      baseUrl: host.url,
      dataDir,
      headers: { 'X-API-Key': bootstrap.api_key },
    });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(created.body.id);
  }, 120_000);
});
