/** Loading data: once, again after an action, or polled while a workflow works. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from './forms.tsx';

/** Loads data for a page; `reload()` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean; settledFor?: unknown[] }>(
    {
      loading: true,
    },
  );
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, loading: false, settledFor: deps });
    } catch (error) {
      if (mine === generation.current) setState({ error, loading: false, settledFor: deps });
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  // `current`: what is shown was loaded for these very deps and nothing is loading. It is false from
  // the render that changes the deps on (the load itself starts only in the effect after it), so
  // the previous page's data is never taken for the new one's.
  const current =
    !state.loading &&
    state.settledFor !== undefined &&
    state.settledFor.length === deps.length &&
    state.settledFor.every((value, i) => Object.is(value, deps[i]));
  return { data: state.data, error: state.error, loading: state.loading, current, reload };
}

/** Runs an action of a form or button: `busy` while it runs, its error kept for display. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true);
      setError(undefined);
      try {
        return await action(...args);
      } catch (caught) {
        setError(caught);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, setError };
}

/**
 * Loads data and loads it again every `intervalMs` while `active(data)` holds; `current` says the data
 * shown was loaded for the present deps. An error after
 * data was shown keeps the data (and the error beside it) and keeps polling, more slowly;
 * `reload()` starts again (after an action), `set(data)` shows an action's answer at once.
 */
export function usePolled<T>(
  load: () => Promise<T>,
  deps: unknown[],
  active: (data: T) => boolean,
  intervalMs = 1000,
) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean; settledFor?: string }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const key = JSON.stringify(deps);
  const lastKey = useRef(key);
  const hasData = useRef(false);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (lastKey.current !== key) {
      lastKey.current = key;
      hasData.current = false;
      setState({ loading: true });
    } else setState((s) => ({ ...s, loading: true }));
    const step = async () => {
      try {
        const data = await load();
        if (stopped) return;
        hasData.current = true;
        setState({ data, loading: false, settledFor: key });
        if (active(data)) timer = setTimeout(step, intervalMs);
      } catch (error) {
        if (stopped) return;
        setState((s) => ({ ...s, error, loading: false, settledFor: key }));
        if (hasData.current) timer = setTimeout(step, intervalMs * 3);
      }
    };
    void step();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key, tick]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    // What is shown was loaded for these deps (a poll of the same page keeps it current).
    current: state.settledFor === key,
    reload: () => setTick((t) => t + 1),
    set: (data: T) => setState({ data, loading: false, settledFor: key }),
  };
}

/** What a load shows in its place: its error, then its data once there ("Loading…" until then). */
export function Loaded<T>({
  state,
  children,
}: {
  state: { data?: T; error?: unknown; loading: boolean };
  children: (data: T) => ComponentChildren;
}) {
  return (
    <>
      <ErrorNote error={state.error} />
      {state.data ? children(state.data) : state.loading ? <p>Loading…</p> : null}
    </>
  );
}
