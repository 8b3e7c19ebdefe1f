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
