import { readdirSync, readFileSync } from 'node:fs';

/** A process of this machine whose command line carries a test run's marker. */
export interface Leftover {
  pid: number;
  commandLine: string;
}

/** Whether the process is gone (a zombie, waiting for its parent to reap it, counts as gone). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/**
 * Live processes started by the test run `marker`: DynamoDB Local JVMs (`-Dgeoplane.run=<marker>`)
 * and local hosts (`--geoplane-run=<marker>`), found in /proc (Linux; elsewhere none are found).
 */
export function processesOfRun(marker: string): Leftover[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const found: Leftover[] = [];
  for (const dir of pids) {
    const pid = Number(dir);
    if (pid === process.pid) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${dir}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue;
    }
    const marked =
      commandLine.includes(`-Dgeoplane.run=${marker}`) || commandLine.includes(`--geoplane-run=${marker}`);
    if (marked && !gone(pid)) found.push({ pid, commandLine });
  }
  return found;
}

/**
 * Waits up to `graceMs` for the run's processes to go (a killed host's DynamoDB Local notices its
 * parent is gone within a second or two), then returns those still alive.
 */
export async function leftoversOfRun(marker: string, graceMs = 15_000): Promise<Leftover[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const left = processesOfRun(marker);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((r) => setTimeout(r, 200));
  }
}
