import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './ports.ts';
import { urlSourceEnv } from './url-source.ts';

const root = resolve(import.meta.dirname, '../..');

/**
 * A loopback address the test hosts allow as a database host (GEOPLANE_ALLOWED_DATABASE_HOSTS,
 * ADR 0074): tests run their fake, flaky and closed data sources here. Nothing else of loopback
 * is allowed but the embedded PostGIS port.
 */
export const FAULT_HOST = '127.0.0.2';

/**
 * The environment of a second host on the run's shared table (its DynamoDB Local and table): it
 * neither resumes nor sweeps the shared host's work. Resumed there, an import would run a second
 * time with this host's data dir — another certificate, another upload folder — and fail.
 */
export function onSharedTable(shared: { dynamoEndpoint: string; tableName: string }): Record<string, string> {
  return {
    GEOPLANE_DYNAMODB_ENDPOINT: shared.dynamoEndpoint,
    GEOPLANE_TABLE_NAME: shared.tableName,
    GEOPLANE_RESUME_WORK: 'off',
  };
}

/** How much of a host's output a test keeps (the last megabyte or so). */
const OUTPUT_CAP = 1_000_000;

/** A local host started as its own process, exactly as `npm start` runs it. */
export interface HostProcess {
  url: string;
  httpUrl: string;
  dataDir: string;
  apiKey?: string;
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
  cleanup(): void;
}

/** Starts `infra/local/main.ts` with its own ports and data dir and waits for "ready". */
export async function startHostProcess(env: Record<string, string> = {}): Promise<HostProcess> {
  const ownDataDir = env.GEOPLANE_DATA_DIR === undefined;
  const dataDir = env.GEOPLANE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'geoplane-host-'));
  const port = await freePort();
  const httpPort = await freePort();
  const dynamoPort = await freePort();
  // The test run's marker on the command line: the global teardown finds a host left behind by it.
  const marker = process.env.GEOPLANE_TEST_RUN;
  const args = ['--import', 'tsx', 'infra/local/main.ts', ...(marker ? [`--geoplane-run=${marker}`] : [])];
  // Import URLs may reach the tests' file servers on one loopback address, with their certificate (ADR 0129).
  const urlSources = await urlSourceEnv(dataDir);
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      GEOPLANE_DATA_DIR: dataDir,
      PORT: String(port),
      HTTP_PORT: String(httpPort),
      DYNAMODB_PORT: String(dynamoPort),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // Only the shared host of the run serves the embedded PostGIS (its first init takes ~40 s).
      GEOPLANE_POSTGIS: 'off',
      GEOPLANE_ALLOWED_DATABASE_HOSTS: FAULT_HOST,
      // Test files share a host's methods: the stage's per-method ceiling (ADR 0111) is not what a
      // test host measures (test/unit/local-gateway.test.ts does); a test may still set its own.
      GEOPLANE_STAGE_RATE_LIMIT_RPS: '100000',
      GEOPLANE_STAGE_RATE_LIMIT_BURST: '100000',
      ...urlSources,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The host logs every request (ADR 0090): keep only the last OUTPUT_CAP characters of it.
  const chunks: string[] = [];
  let kept = 0;
  let output = '';
  const keep = (d: Buffer | string) => {
    const text = String(d);
    chunks.push(text);
    kept += text.length;
    while (kept > OUTPUT_CAP && chunks.length > 1) kept -= (chunks.shift() as string).length;
    output = '';
  };
  const text = () => {
    output ||= chunks.join('');
    return output;
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // The embedded PostGIS's first start takes ~70 s alone and several times that on a machine
  // shared with other test runs; a host that is still making progress is worth the wait.
  const deadline = Date.now() + 330_000;
  while (!/^ready$/m.test(text())) {
    // Ended by a signal (killed from outside) too: its exit code stays null, so look at both.
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`local host exited (${child.exitCode ?? child.signalCode}):\n${text()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`local host did not become ready:\n${text()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  let apiKey: string | undefined;
  try {
    apiKey = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8')).api_key;
  } catch {
    apiKey = undefined;
  }
  return {
    url: `https://127.0.0.1:${port}/api/v1`,
    httpUrl: `http://127.0.0.1:${httpPort}/api/v1`,
    dataDir,
    apiKey,
    child,
    output: text,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
    /** Removes the data dir this call created (not one passed in). */
    cleanup() {
      if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
