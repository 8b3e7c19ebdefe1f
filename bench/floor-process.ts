import { type ChildProcess, spawn } from 'node:child_process';
import { root } from './bundles.ts';

const awsEnv = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/**
 * Starts `bench/floor-server.ts` (THE FLOOR) as its own process with the certificate of the host
 * in `tlsDir`, reading the DynamoDB Local at `endpoint`; `ready` resolves with its port.
 */
export function startFloorServer(
  tlsDir: string,
  endpoint: string,
): { ready: Promise<number>; child: ChildProcess } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/floor-server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      ...awsEnv,
      BENCH_TLS_DIR: tlsDir,
      DYNAMODB_ENDPOINT: endpoint,
      TABLE_NAME: 'geoplane',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`floor server not ready in 30 s:\n${output}`)), 30_000);
    const onData = (d: Buffer) => {
      output += d;
      const m = /^ready (\d+)$/m.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`floor server exited (${code}):\n${output}`));
    });
  });
  ready.catch(() => {});
  return { ready, child };
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
