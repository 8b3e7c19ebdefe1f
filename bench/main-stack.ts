/**
 * The main stack of `npm run bench`: DynamoDB Local on disk, the local host with its embedded
 * PostGIS, the floor server — started once for sections 1, 2 (cold requests), 8 and 9.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoLocal, startDynamoLocal } from '#infra/local/dynamodb.ts';
import { type HostProcess, startHostProcess } from '../test/support/host-process.ts';
import { freePort } from '../test/support/ports.ts';
import { onCleanup, stopStarting } from './cleanup.ts';
import type { ColdStack } from './cold-lambda.ts';
import type { DataPlaneTarget } from './data-plane-types.ts';
import { startFloorServer, stopChild } from './floor-process.ts';
import { progress } from './run-plan.ts';
import { fixed } from './stats.ts';

// ---- part 1 helpers -----------------------------------------------------------------------------
export function expect(condition: unknown, message: string): void {
  if (!condition) throw new Error(message);
}

/** The main stack: DynamoDB Local on disk, the local host with its embedded PostGIS, the floor server. */
export interface MainStack {
  dataDir: string;
  host: HostProcess;
  floorPort: number;
  agent: Agent;
  auth: Record<string, string>;
  postgis: { host: string; port: number; database: string; user: string; password: string };
  dynamoStartMs: number;
  hostStartMs: number;
}

export interface MainDynamo {
  dataDir: string;
  dynamo: DynamoLocal;
  dynamoStartMs: number;
}

/** The main stack's DynamoDB Local (on disk, in a temp data dir); idle once started. */
export async function startMainDynamo(): Promise<MainDynamo> {
  const dataDir = mkdtempSync(join(tmpdir(), 'geoplane-bench-'));
  onCleanup('data dir', () => rmSync(dataDir, { recursive: true, force: true }));
  const t = Date.now();
  const dynamoPromise = freePort().then((port) => startDynamoLocal(port, join(dataDir, 'dynamodb')));
  onCleanup('DynamoDB Local', stopStarting(dynamoPromise, join(dataDir, 'dynamodb')));
  const dynamo: DynamoLocal = await dynamoPromise;
  return { dataDir, dynamo, dynamoStartMs: Date.now() - t };
}

export async function startMainStack({ dataDir, dynamo, dynamoStartMs }: MainDynamo): Promise<MainStack> {
  progress('starting the local host with its embedded PostGIS (first init: ~20–40 s)');
  const t = Date.now();
  const hostPromise = freePort().then((postgisPort) =>
    startHostProcess({
      GEOPLANE_DATA_DIR: dataDir,
      GEOPLANE_DYNAMODB_ENDPOINT: dynamo.endpoint,
      GEOPLANE_POSTGIS: 'on',
      GEOPLANE_POSTGIS_PORT: String(postgisPort),
      // The benchmark sends far more than the default 50 rps of one usage key: no 429s wanted here.
      GEOPLANE_RATE_LIMIT_RPS: '1000000',
      GEOPLANE_RATE_LIMIT_BURST: '1000000',
    }),
  );
  // Stopping the host stops its PostGIS worker thread with it (same process).
  onCleanup('local host', stopStarting(hostPromise, `GEOPLANE_DATA_DIR=${dataDir}\u0000`));
  const host: HostProcess = await hostPromise;
  const hostStartMs = Date.now() - t;
  progress(`local host ready in ${fixed(hostStartMs / 1000, 1)} s`);
  expect(host.apiKey, `the local host wrote no bootstrap key in ${dataDir}`);
  const saved = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8'));
  expect(saved.postgis?.port, 'bootstrap.json names no embedded PostGIS');

  const floor = startFloorServer(dataDir, dynamo.endpoint);
  onCleanup('floor server', () => stopChild(floor.child));
  const floorPort = await floor.ready;

  // One keep-alive client for everything; it trusts the host's self-signed certificate and nothing else.
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: readFileSync(join(dataDir, 'tls-cert.pem')),
  });
  onCleanup('HTTPS client', () => agent.destroy());
  const auth = { 'X-API-Key': host.apiKey as string };
  return { dataDir, host, floorPort, agent, auth, postgis: saved.postgis, dynamoStartMs, hostStartMs };
}

/** Section 8's target on the main stack. */
export function dataPlaneTarget(m: MainStack, dynamoEndpoint: string): DataPlaneTarget {
  return {
    url: m.host.url,
    dataDir: m.dataDir,
    apiKey: m.host.apiKey as string,
    floorPort: m.floorPort,
    dynamoEndpoint,
    postgis: m.postgis,
  };
}

/** The cold requests' stack (section 2, bench/cold-requests.ts) on the main stack; `demo`: section 1's workspace and service. */
export function coldStackOf(
  m: MainStack,
  mainDynamo: MainDynamo,
  demo?: { workspaceId: string; serviceId: string },
): ColdStack {
  return {
    dataDir: m.dataDir,
    dynamoEndpoint: mainDynamo.dynamo.endpoint,
    hostUrl: m.host.url,
    apiKey: m.host.apiKey as string,
    postgis: m.postgis,
    ...demo,
  };
}
