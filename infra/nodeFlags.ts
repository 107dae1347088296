/**
 * The Node command-line flags of the API and worker processes, chosen at start from what the
 * running Node accepts. `engines` admits several major versions (package.json) and Node options
 * come and go between them: `--experimental-async-context-frame` is an option of Node 22 and a
 * "bad option" on Node 24+, where AsyncContextFrame is the default and the flag is gone (the
 * process would not start). V8 flags are kept on every admitted version (test/unit/nodeVersions.test.ts
 * starts the API and the worker on each version `engines` names).
 *
 * Plain module with no imports from the project: the launcher (scripts/launch.ts) reads it
 * before anything else is loaded.
 */

/**
 * V8 flags, to keep each process under 500 MB RSS during a 100,000-row import without spending
 * its CPU on garbage collection:
 * - a capped old generation (384 MB). Under 2 GB V8 also shrinks its heap growing factor to
 *   ~1.3, which made the worker run a full collection every few dozen MB promoted (about a third
 *   of its CPU in bench/ingest-cpu.ts); `--heap-growing-percent=75` lets the heap grow by 75%
 *   between full collections instead (worker CPU ~25% lower, peak RSS ~420 MB);
 * - a 16 MB young generation, so the short-lived objects of a 10,000-row chunk die young instead
 *   of being promoted and collected again.
 * On the command line: NODE_OPTIONS refuses V8 flags such as --heap-growing-percent.
 */
const V8_FLAGS = ['--max-old-space-size=384', '--heap-growing-percent=75', '--max-semi-space-size=16'];

/**
 * `AsyncLocalStorage` (the log context, MikroORM's and Temporal's contexts) on V8's continuation
 * frames instead of promise hooks: no hook runs per promise. The API spent 4–12% less CPU per
 * request with it (docs/ARCHITECTURE.md "The hot path"). Node 24+ does it by default and has
 * no such option any more.
 */
export const ASYNC_CONTEXT_FRAME = '--experimental-async-context-frame';

/** The Node options among our flags that exist only on some versions: passed where this Node has them. */
const VERSIONED_OPTIONS = [ASYNC_CONTEXT_FRAME];

/** What the running Node (or the given set of allowed options) accepts of `flags`. */
export function supportedFlags(flags: readonly string[], allowed: ReadonlySet<string> = process.allowedNodeEnvironmentFlags): string[] {
  return flags.filter((flag) => !VERSIONED_OPTIONS.includes(flag) || allowed.has(flag.split('=')[0]!));
}

/** Flags of the API process (and of any process that runs like it: benchmarks, tests' children). */
export const PROCESS_NODE_FLAGS = supportedFlags([...V8_FLAGS, ASYNC_CONTEXT_FRAME]);

/**
 * The worker's flags: PROCESS_NODE_FLAGS with garbage collection on the main thread only. The
 * worker is a batch process on a machine whose cores its PostgreSQL backends need: V8's parallel
 * and concurrent collector threads cost more CPU than they save it (bench/ingest-cpu.ts, 100k
 * rows, three alternated pairs: 3.80–3.92 s of worker CPU against 4.23–4.35 s for a first load,
 * 4.07–4.13 s against 4.53–4.60 s for a re-send, peak RSS unchanged). Its longer pauses are no
 * one's latency. The API keeps the parallel collector: its pauses are requests' latency.
 */
export const WORKER_NODE_FLAGS = [...PROCESS_NODE_FLAGS, '--single-threaded-gc'];

/** The processes the launcher starts, with their flags. */
export const LAUNCHABLE = {
  api: { entry: 'api/main', flags: PROCESS_NODE_FLAGS },
  worker: { entry: 'worker/main', flags: WORKER_NODE_FLAGS },
} as const;
