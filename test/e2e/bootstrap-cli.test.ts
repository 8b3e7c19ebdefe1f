import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '#store/keys.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { hostDynamo } from '../support/store.ts';

// `geoplane bootstrap` (ADR 0089) against the run's DynamoDB Local and table (--endpoint/--table
// stand in for the stack's TableName output); the shared test host reads the same table.

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/geoplane.mjs');

let home = '';

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'geoplane-bootstrap-'));
});

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

/** An environment with no AWS settings of the caller's (no profile, no config files, no instance metadata). */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const kept = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        (!k.startsWith('AWS_') || k === 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED') &&
        !k.startsWith('GEOPLANE_'),
    ),
  );
  return {
    ...kept,
    HOME: home,
    AWS_CONFIG_FILE: join(home, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

function geoplane(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: home, env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`geoplane ${args.join(' ')} ran over 60 s\n${stdout}\n${stderr}`));
    }, 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

// Each case spawns the CLI a few times: on a loaded machine one spawn takes seconds.
describe('geoplane bootstrap', { timeout: 150_000 }, () => {
  const local = () => {
    const host = inject('host');
    return ['--table', host.tableName, '--endpoint', host.dynamoEndpoint, '--region', 'us-east-1'];
  };
  const credentials = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' };

  it('creates a global super_admin key, prints it once and stores only its hash; the key works', async () => {
    // Act
    const name = uniqueName('bootstrap');
    const run = await geoplane(['bootstrap', ...local(), '--name', name], bareEnv(credentials));

    // Assess: the key alone on stdout, the warning on stderr.
    expect(run.stderr).toContain('shown only this once');
    expect(run.code, run.stderr).toBe(0);
    const secret = run.stdout.trim();
    expect(secret).toMatch(/^gpk_[A-Za-z0-9_-]{43}$/);
    expect(run.stderr).not.toContain(secret);
    const id = /\(id ([0-9a-f-]{36})\)/.exec(run.stderr)?.[1];
    expect(id).toBeDefined();

    // Only the hash is stored: in the key item and in the credential item it is found by.
    const db = hostDynamo();
    const hash = createHash('sha256').update(secret, 'utf8').digest('hex');
    const tableName = inject('host').tableName;
    const items = [
      (await db.send(new GetCommand({ TableName: tableName, Key: keys.apiKey(undefined, id as string) })))
        .Item,
      (await db.send(new GetCommand({ TableName: tableName, Key: keys.apiKeyHash(hash) }))).Item,
    ];
    for (const item of items) {
      expect(item).toBeDefined();
      expect(JSON.stringify(item)).not.toContain(secret.slice(4));
    }
    expect(items[0]).toMatchObject({ key_hash: hash, role_id: 'super_admin', name });
    expect(items[0]?.workspace_id).toBeUndefined();

    // The printed key authenticates as super_admin on the host that reads the same table.
    const res = await call('GET', '/claim-mappings?limit=1', { headers: { 'X-API-Key': secret } });
    expect(res.status).toBe(200);
  });

  it('--json prints the new key as one JSON document, and a revoke as JSON too', async () => {
    const name = uniqueName('bootstrap-json');
    const run = await geoplane(['bootstrap', ...local(), '--name', name, '--json'], bareEnv(credentials));

    expect(run.code, run.stderr).toBe(0);
    const made = JSON.parse(run.stdout);
    expect(made).toEqual({ id: expect.any(String), name, role_id: 'super_admin', key: expect.any(String) });
    expect(made.key).toMatch(/^gpk_[A-Za-z0-9_-]{43}$/);
    expect(run.stderr).toContain('shown only this once');
    expect(run.stderr).not.toContain(made.key);
    expect(
      (await call('GET', '/claim-mappings?limit=1', { headers: { 'X-API-Key': made.key } })).status,
    ).toBe(200);

    const revoked = await geoplane(
      ['bootstrap', ...local(), '--revoke', made.id, '--json'],
      bareEnv(credentials),
    );
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({
      id: made.id,
      name,
      role_id: 'super_admin',
      revoked: true,
      already_revoked: false,
    });
  });

  it('refuses with a clear message when there are no AWS credentials (usage: exit 2)', async () => {
    const run = await geoplane(['bootstrap', ...local()], bareEnv());

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: no AWS credentials/m);
    expect(run.stdout).toBe('');
  });

  it('asks for the stack when neither --stack nor --table is given (usage: exit 2)', async () => {
    const run = await geoplane(['bootstrap', '--region', 'us-east-1'], bareEnv(credentials));

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--stack <name>');
  });

  it('revokes a global key with --revoke: refused from then on, idempotent, and an unknown or workspace key is an error', async () => {
    // Arrange: a bootstrap key that works.
    const made = await geoplane(
      ['bootstrap', ...local(), '--name', uniqueName('retired')],
      bareEnv(credentials),
    );
    expect(made.code, made.stderr).toBe(0);
    const secret = made.stdout.trim();
    const id = /\(id ([0-9a-f-]{36})\)/.exec(made.stderr)?.[1] as string;
    expect((await call('GET', '/claim-mappings?limit=1', { headers: { 'X-API-Key': secret } })).status).toBe(
      200,
    );

    // Act
    const revoked = await geoplane(
      ['bootstrap', ...local(), '--revoke', id.toUpperCase()],
      bareEnv(credentials),
    );

    // Assess: refused at once, nothing on stdout; a second revoke says so and changes nothing.
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe('');
    expect(revoked.stderr).toContain(`Revoked the global super_admin API key`);
    expect((await call('GET', '/claim-mappings?limit=1', { headers: { 'X-API-Key': secret } })).status).toBe(
      401,
    );
    const again = await geoplane(['bootstrap', ...local(), '--revoke', id], bareEnv(credentials));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('already revoked');

    // A workspace key is not a global key: the API revokes those, the CLI refuses.
    const workspace = uniqueName('ws');
    expect(
      (await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name: workspace } })).status,
    ).toBe(201);
    const wsKey = await call('POST', `/workspaces/${workspace}/apikeys`, {
      headers: asSuperAdmin(),
      body: { name: 'k', role_id: 'viewer' },
    });
    expect(wsKey.status).toBe(201);
    for (const unknown of [wsKey.body.id as string, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const refused = await geoplane(['bootstrap', ...local(), '--revoke', unknown], bareEnv(credentials));
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^error: no global API key with id/m);
    }
    expect(
      (await call('GET', `/workspaces/${workspace}`, { headers: { 'X-API-Key': wsKey.body.key } })).status,
    ).toBe(200);
  });
});
