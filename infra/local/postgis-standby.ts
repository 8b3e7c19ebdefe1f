/**
 * The warm standby's start gate (ADR 0142): a PGlite extension that holds the start between
 * loading the extensions and opening the data dir, and meanwhile does the rest of a restart's work
 * that needs no data dir. Used by the worker (./postgis-worker.ts) when it starts as a standby.
 */
import type { Extension } from '@electric-sql/pglite';

/** What a standby did ahead, besides loading PGlite and PostGIS (the host logs it). */
export interface StandbyAhead {
  /** PostGIS's library, linked into the process as PostgreSQL's first PostGIS call would. */
  linked: boolean;
  /** Bytes of fresh WebAssembly memory written once, so PostgreSQL's shared memory finds them mapped. */
  touchedBytes: number;
  /** Why a step was not done (another PGlite build): the restart still works, as before. */
  problems: string[];
}

/** The parts of PGlite's Emscripten module the gate uses; each one is checked before use. */
interface EmscriptenModule {
  pg_extensions?: Record<string, PromiseLike<Blob>>;
  monitorRunDependencies?: (left: number) => void;
  WASM_PREFIX?: string;
  HEAPU8?: Uint8Array;
  _malloc?: (bytes: number) => number;
  _free?: (pointer: number) => void;
  _dlopen?: (file: number, flags: number) => number;
  _dlerror?: () => number;
  UTF8ToString?: (pointer: number) => string;
}

/** PostgreSQL's flags for a module's library (dfmgr.c: RTLD_NOW | RTLD_GLOBAL), as Emscripten's libc numbers them. */
const RTLD_NOW = 2;
const RTLD_GLOBAL = 256;
/** PostGIS's library in PGlite's file system, below its prefix: what `$libdir/postgis-3` names. */
const POSTGIS_LIBRARY = '/lib/postgresql/postgis-3.so';

/**
 * Holds PGlite's start between loading its extensions and opening the data dir (ADR 0142). PGlite
 * awaits the extension bundles of `pg_extensions` one by one, in order, right before it starts the
 * backend on the data dir; this one comes after PostGIS's and resolves (to an empty tar) on `open`.
 * Before that, the data dir is only mounted and stat'ed: a running worker may still own it.
 * Once PGlite has reached it and PostGIS's modules are compiled (no file system run dependency
 * left), it does ahead what the restart would do next ({@link prepareAhead}) and calls `onWaiting`.
 */
export function startGate(
  open: Promise<void>,
  sharedMemoryBytes: number,
  onWaiting: (ahead: StandbyAhead) => void,
): Extension {
  const name = 'geoplane_start_gate';
  return {
    name,
    setup: async (_pg, emscriptenOpts) => ({
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [
          ...(emscriptenOpts.preRun ?? []),
          (mod: EmscriptenModule) => {
            if (!mod.pg_extensions) throw new Error('PGlite has no pg_extensions to hold its start on');
            // PostGIS's modules compile as run dependencies of the file system: warm once none is left.
            let left = 0;
            let settled: (() => void) | undefined;
            mod.monitorRunDependencies = (n) => {
              left = n;
              if (n === 0) settled?.();
            };
            const compiled = () =>
              new Promise<void>((resolve) => {
                settled = resolve;
                if (left === 0) resolve();
              });
            mod.pg_extensions[name] = {
              // biome-ignore lint/suspicious/noThenProperty: PGlite awaits this entry like its bundles' promises.
              then: (resolve, reject) => {
                void compiled().then(() => onWaiting(prepareAhead(mod, sharedMemoryBytes)));
                return open.then(() => new Blob([])).then(resolve, reject);
              },
            };
          },
        ],
      },
    }),
  };
}

/**
 * What a restart would otherwise do after the data dir opens, done while the standby waits:
 *
 * - **Link PostGIS.** PostgreSQL loads a module's library at its first call (dlopen, then its
 *   symbols); in PGlite that is Emscripten's dynamic linker merging the library's thousands of
 *   exports into the module's symbol table, ~100 ms of JavaScript, which the restart's probe query
 *   (`postgis_lib_version()`) paid. Opened here with PostgreSQL's own flags, the library is found
 *   already loaded by the backend's dlopen, which then only looks up its symbols and runs its
 *   `_PG_init`, as before.
 * - **Touch the memory PostgreSQL's shared memory will take.** The backend's start maps its shared
 *   memory (~42 MB with 32 MB of shared buffers) and zeroes it; WebAssembly memory fresh from a
 *   grow costs a page fault at its first write, and those faults were most of the start (~170 ms
 *   of memset). A block of that size, allocated, written once and freed, is where the allocator
 *   finds the mapping next (the free block that fits), so the start writes to pages already there.
 *
 * Neither touches the data dir. A step PGlite's build doesn't allow is skipped and named.
 */
function prepareAhead(mod: EmscriptenModule, sharedMemoryBytes: number): StandbyAhead {
  const ahead: StandbyAhead = { linked: false, touchedBytes: 0, problems: [] };
  const { _malloc: malloc, _free: free } = mod;
  if (!malloc || !free || !mod.HEAPU8) {
    ahead.problems.push('PGlite exports no malloc, free or heap');
    return ahead;
  }
  if (mod._dlopen && mod.WASM_PREFIX !== undefined) {
    const path = new TextEncoder().encode(`${mod.WASM_PREFIX}${POSTGIS_LIBRARY}\0`);
    const pointer = malloc(path.length);
    mod.HEAPU8.set(path, pointer);
    const handle = mod._dlopen(pointer, RTLD_NOW | RTLD_GLOBAL);
    free(pointer);
    if (handle !== 0) ahead.linked = true;
    else {
      const why = mod._dlerror?.() ?? 0;
      ahead.problems.push(
        `PostGIS not linked: ${why && mod.UTF8ToString ? mod.UTF8ToString(why) : 'dlopen failed'}`,
      );
    }
  } else ahead.problems.push('PGlite exports no dlopen');
  const block = malloc(sharedMemoryBytes);
  if (block === 0) ahead.problems.push(`no ${sharedMemoryBytes} bytes to touch`);
  else {
    // The view is replaced when the memory grows: take it after the allocation.
    mod.HEAPU8.fill(0, block, block + sharedMemoryBytes);
    free(block);
    ahead.touchedBytes = sharedMemoryBytes;
  }
  return ahead;
}
