import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, dynamoLocalArgs, startDynamoLocal } from '#infra/local/dynamodb.ts';
import { freePort } from '../support/ports.ts';

const root = resolve(import.meta.dirname, '../..');

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', () => done(false));
  });
}

/** Whether the process is alive (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** This machine's addresses that are not loopback (IPv4 and IPv6). */
const outerAddresses = Object.values(networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && !a.internal && !a.address.startsWith('fe80'))
  .map((a) => (a as { address: string }).address);

describe('DynamoDB Local (ADR 0087)', () => {
  let dynamo: DynamoLocal;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    dynamo = await startDynamoLocal(port);
  }, 60_000);

  afterAll(async () => {
    await dynamo?.stop();
  });

  it('is started bound to 127.0.0.1', () => {
    expect(dynamoLocalArgs(port)).toContain('-Dgeoplane.dynamodb.host=127.0.0.1');
  });

  it('accepts connections on 127.0.0.1', async () => {
    expect(await accepts('127.0.0.1', port)).toBe(true);
  });

  it.skipIf(outerAddresses.length === 0)(
    `is not reachable on any other address of this machine (${outerAddresses.join(', ')})`,
    async () => {
      for (const address of outerAddresses)
        expect({ address, open: await accepts(address, port) }).toEqual({
          address,
          open: false,
        });
    },
  );

  it('exits when the process that started it is killed with SIGKILL', async () => {
    // Prepare: a parent process that starts DynamoDB Local and prints its pid.
    const script = `
      import { startDynamoLocal } from './infra/local/dynamodb.ts';
      const d = await startDynamoLocal(${await freePort()});
      console.log('pid=' + d.process.pid);
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    parent.stdout?.on('data', (d) => {
      output += d;
    });
    const deadline = Date.now() + 60_000;
    while (!/pid=\d+/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const pid = Number(/pid=(\d+)/.exec(output)?.[1]);
    expect(alive(pid)).toBe(true);
    // Act
    parent.kill('SIGKILL');
    // Assess: the JVM notices its parent is gone and exits within seconds.
    const until = Date.now() + 15_000;
    while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const left = alive(pid);
    if (left) process.kill(pid, 'SIGKILL');
    expect(left).toBe(false);
  }, 90_000);
});
