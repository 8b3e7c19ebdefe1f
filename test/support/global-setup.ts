import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type DynamoLocal, startDynamoLocal } from '#infra/local/dynamodb.ts';
import { type HostProcess, startHostProcess } from './host-process.ts';
import { leftoversOfRun } from './leftovers.ts';
import { freePort } from './ports.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    host: {
      url: string;
      httpUrl: string;
      dataDir: string;
      apiKey: string;
      dynamoEndpoint: string;
      tableName: string;
    };
  }
}

/**
 * Starts one DynamoDB Local (in memory) and one local host process for the whole run. Tests use
 * unique names instead of truncating tables. Every DynamoDB Local and host the run starts carries
 * its marker (GEOPLANE_TEST_RUN, inherited by the test workers); the teardown fails the run when
 * one of them is still alive at the end (ADR 0087).
 */
export default async function setup(project: TestProject) {
  const marker = `geoplane-test-${randomUUID()}`;
  process.env.GEOPLANE_TEST_RUN = marker;
  // The run's temporary files — the workers', the hosts' (downloaded import sources, readers'
  // scratch, CDK's output dirs) — go in one dir of its own, inherited like the marker and removed
  // at the end: a host killed mid-import or a test that forgets its dir leaves nothing in /tmp.
  const runTmp = mkdtempSync(join(tmpdir(), 'geoplane-test-run-'));
  process.env.TMPDIR = runTmp;
  /** Removes the run's dir; never in the way of what follows (a dir left behind is the lesser fault). */
  const removeRunTmp = () => {
    try {
      rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
    } catch (error) {
      console.warn(`the run's temporary dir ${runTmp} was not removed: ${(error as Error).message}`);
    }
  };
  const tableName = 'geoplane-test';
  const { dynamo, host, apiKey } = await startShared(tableName).catch((error: unknown) => {
    removeRunTmp();
    throw error;
  });
  project.provide('host', {
    url: host.url,
    httpUrl: host.httpUrl,
    dataDir: host.dataDir,
    apiKey,
    dynamoEndpoint: dynamo.endpoint,
    tableName,
  });
  return async () => {
    // GEOPLANE_TEST_HOST_LOG=<file> keeps the shared host's output (its errors explain a 500).
    if (process.env.GEOPLANE_TEST_HOST_LOG) writeFileSync(process.env.GEOPLANE_TEST_HOST_LOG, host.output());
    await host.stop();
    host.cleanup();
    await dynamo.stop();
    removeRunTmp();
    const left = await leftoversOfRun(marker);
    if (left.length > 0) {
      // They are this run's own: end them, then fail the run so the leak is fixed, not ignored.
      for (const { pid } of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      // Vitest reports an error thrown here but still exits 0; the exit code is what CI reads.
      process.exitCode = 1;
      throw new Error(
        `the test run left ${left.length} process(es) alive:\n${left.map((p) => `  ${p.pid} ${p.commandLine.slice(0, 300)}`).join('\n')}`,
      );
    }
  };
}

/**
 * The run's DynamoDB Local and its shared host. Vitest runs no teardown for a setup that failed,
 * so a failed start ends what it started here before it throws.
 */
async function startShared(
  tableName: string,
): Promise<{ dynamo: DynamoLocal; host: HostProcess; apiKey: string }> {
  let dynamo: DynamoLocal | undefined;
  let host: HostProcess | undefined;
  try {
    dynamo = await startDynamoLocal(await freePort());
    host = await startHostProcess({
      GEOPLANE_DYNAMODB_ENDPOINT: dynamo.endpoint,
      GEOPLANE_TABLE_NAME: tableName,
      // Parallel test files share the bootstrap key's bucket; rate limiting has its own host in its test.
      GEOPLANE_RATE_LIMIT_RPS: '2000',
      GEOPLANE_RATE_LIMIT_BURST: '4000',
      // The one host of the run that serves the embedded PostGIS.
      GEOPLANE_POSTGIS: 'on',
      GEOPLANE_POSTGIS_PORT: String(await freePort()),
    });
    if (!host.apiKey) throw new Error('the local host wrote no bootstrap key');
    return { dynamo, host, apiKey: host.apiKey };
  } catch (error) {
    await host?.stop();
    await dynamo?.stop();
    throw error;
  }
}
