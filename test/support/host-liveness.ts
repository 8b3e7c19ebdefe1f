import { readFileSync } from 'node:fs';
import { processesOfRun } from './leftovers.ts';

/**
 * The pid of the local host process (`infra/local/main.ts`) of this test run that serves
 * `dataDir`: found in /proc by the run's marker on its command line and GEOPLANE_DATA_DIR in its
 * environment (Linux; elsewhere undefined).
 */
export function hostPid(dataDir: string): number | undefined {
  const marker = process.env.GEOPLANE_TEST_RUN;
  if (!marker) return undefined;
  for (const { pid, commandLine } of processesOfRun(marker)) {
    if (!commandLine.includes('infra/local/main.ts')) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (environ.includes(`GEOPLANE_DATA_DIR=${dataDir}`)) return pid;
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** Whether the process is alive (a zombie counts as dead). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}
