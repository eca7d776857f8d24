// Parameters shared by the fast-check property tests (issue 23): a fixed seed unless one is given
// (UNROLL_LENS_SEED, or the older per-file names), so a run is repeatable and a failure printed
// with its seed and path can be replayed (UNROLL_LENS_SEED=<seed> UNROLL_LENS_PATH=<path>); a
// time budget that also bounds shrinking, so a slow or stuck property fails instead of hanging.
import fc from 'fast-check';

export function propertyRuns(numRuns: number, defaultSeed: number, budgetMs: number, ...legacySeedVars: string[]): fc.Parameters<unknown> {
  const given = [process.env.UNROLL_LENS_SEED, ...legacySeedVars.map(v => process.env[v])].find(s => s !== undefined && s !== '');
  const seed = given === undefined ? defaultSeed : Number(given);
  if (!Number.isSafeInteger(seed)) throw new Error(`the property seed must be an integer, not ${JSON.stringify(given)}`);
  return {
    numRuns,
    seed,
    path: process.env.UNROLL_LENS_PATH || undefined,
    verbose: fc.VerbosityLevel.Verbose,
    interruptAfterTimeLimit: budgetMs,
    markInterruptAsFailure: true,
  };
}
