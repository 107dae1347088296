/**
 * Milliseconds spent per phase of the ingest path, summed over batches (and lanes). Filled only
 * when a caller passes one (the benchmarks); production code passes none.
 */
export type PhaseTimes = Record<string, number>;

/** Runs `fn`, adding its wall time to `times[name]` when `times` is given. */
export async function timed<T>(times: PhaseTimes | undefined, name: string, fn: () => Promise<T> | T): Promise<T> {
  if (!times) return fn();
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    times[name] = (times[name] ?? 0) + performance.now() - t0;
  }
}
