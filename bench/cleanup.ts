import { readdirSync, readFileSync } from 'node:fs';

/**
 * Everything the benchmark starts is registered here, newest first, so it is stopped on success,
 * on an error, on SIGINT/SIGTERM and when the watchdog fires.
 */
type Stopper = () => Promise<void> | void;

const stoppers: { name: string; stop: Stopper }[] = [];
let running: Promise<void> | undefined;
let interrupted = false;

/** True once a signal or the watchdog started stopping everything (errors after that are expected). */
export function wasInterrupted(): boolean {
  return interrupted;
}

/** Registers something to stop; registered before awaiting its start, so a start in flight is covered. */
export function onCleanup(name: string, stop: Stopper): void {
  stoppers.unshift({ name, stop });
}

/** Stops now (newest first) what was registered under names starting with `prefix`. Never throws. */
export async function stopNow(prefix: string): Promise<void> {
  for (const entry of stoppers.filter((s) => s.name.startsWith(prefix))) {
    stoppers.splice(stoppers.indexOf(entry), 1);
    try {
      await entry.stop();
    } catch (error) {
      process.stderr.write(`stopping ${entry.name} failed: ${(error as Error).message}\n`);
    }
  }
}

/** Stops everything registered (once; later calls wait for the first). Never throws. */
export function cleanup(): Promise<void> {
  running ??= (async () => {
    while (stoppers.length) {
      const next = stoppers.shift();
      if (!next) break;
      try {
        await Promise.race([
          Promise.resolve().then(next.stop),
          new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 20_000).unref()),
        ]);
      } catch (error) {
        process.stderr.write(`cleanup of ${next.name} failed: ${(error as Error).message}\n`);
      }
    }
  })();
  return running;
}

/** Stops everything and exits on SIGINT/SIGTERM, and after `watchdogMs` in any case. */
export function installExitHandlers(watchdogMs: number): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      interrupted = true;
      process.stderr.write(`\n${signal}: stopping everything the benchmark started…\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  setTimeout(() => {
    interrupted = true;
    process.stderr.write(`\nbenchmark watchdog: still running after ${watchdogMs / 1000} s; giving up\n`);
    void cleanup().finally(() => process.exit(1));
  }, watchdogMs).unref();
}

/** Direct children of this process whose command line or environment contains `mark` (Linux /proc; none elsewhere). */
function childrenMarked(mark: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  return entries.flatMap((d) => {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) return [];
      const text = readFileSync(`/proc/${d}/cmdline`, 'utf8') + readFileSync(`/proc/${d}/environ`, 'utf8');
      return text.includes(mark) ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
}

/**
 * A stopper for something whose start may still be in flight: stops it once started; if it has
 * not started within `waitMs`, kills the child process being started, found by `mark` (a data
 * dir or port only that child names) among this process's own children, by its pid.
 */
export function stopStarting(
  start: Promise<{ stop(): Promise<void> | void } | undefined>,
  mark: string,
  waitMs = 3000,
): Stopper {
  return async () => {
    const pending = Symbol('pending');
    const started = await Promise.race([
      start.catch(() => undefined),
      new Promise<typeof pending>((r) => setTimeout(() => r(pending), waitMs).unref()),
    ]);
    if (started !== pending) return started?.stop();
    for (const pid of childrenMarked(mark)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
}
