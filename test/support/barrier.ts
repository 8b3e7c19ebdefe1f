/**
 * A barrier for `expected` calls (the "read together" tests of ADR 0154): each `wait()` returns
 * once all `expected` have started, so calls made one after the other never get there — the
 * first waits for ever and the test times out.
 */
export function barrier(expected: number) {
  let started = 0;
  let release: () => void = () => undefined;
  const all = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    /** How many calls have started. */
    started: () => started,
    async wait() {
      started += 1;
      if (started === expected) release();
      await all;
    },
  };
}
