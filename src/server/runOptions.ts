// The unrollLens.profile.* settings as the engine's run configuration: the one builder the bench,
// compare and sweep services share (the engine knows nothing of settings; the command line's
// builder is cli/gpuOptions.ts).
import * as os from 'os';
import type { ProfileSettings } from '../settings';
import { GpuSelectionError, parseGpuSelection, runLocations, type GpuRunConfig } from '../engine';

/** unrollLens.profile.gpus → CUDA device indices (with a launcher the GPUs are the node's: not checked here). */
export function gpusFromSetting(text: string, gpusHere: number, launcher: string[]): number[] {
  try {
    return parseGpuSelection(text, launcher.length ? 0 : gpusHere);
  } catch (e) {
    if (e instanceof GpuSelectionError) throw new Error(`unrollLens.profile.gpus: ${e.message}`);
    throw e;
  }
}

/**
 * How programs are run and timed, where they are built and their run files go, and on which GPUs,
 * from the unrollLens.profile.* settings. `cacheDir`: the build cache (the shared directory moves
 * it); `gpusHere`: the GPUs nvidia-smi lists, or null when the runs are not placed on this
 * machine's (a Slurm job's nodes choose them; a static sweep runs none): no GPU list then.
 */
export function runConfigFromSettings(
  p: ProfileSettings,
  place: { cacheDir: string; gpusHere: number | null },
): { cacheDir: string; config: GpuRunConfig } {
  // clockControl and cacheControl are ncu's options: the CUPTI timer (the default) ignores them
  // without a note (their defaults, base and all, would make it on every run: a default cannot be
  // told from a choice here); the result's measurement conditions say what the run really had.
  // An empty template means "not set": the program itself, nvcc, no check command.
  const template = (t: string[]) => (t.length ? t : undefined);
  const where = runLocations({ cacheDir: place.cacheDir, sharedDirectory: p.sharedDirectory, launcher: p.launcher, tmpDir: os.tmpdir() });
  // in this order: a Slurm sweep's folder is named by a hash of its configuration's JSON (engine/sweep/slurm/manifest.ts)
  const config: GpuRunConfig = {
    args: p.args,
    samples: p.samples,
    maxSamples: p.maxSamples,
    warmup: p.warmup,
    clockControl: p.clockControl,
    cacheControl: p.cacheControl,
    timer: p.timer,
    stalls: p.stalls === 'on',
    counters: p.counters === 'on',
    timeoutMs: p.timeoutSeconds * 1000,
    launcher: p.launcher,
    runCommand: template(p.runCommand),
    compileCommand: template(p.compileCommand),
    checkCommand: template(p.checkCommand),
    // One more run of the file as written for its stalls per source line (a comparison takes none).
    sourceStalls: p.sourceStalls,
    gpus: place.gpusHere === null ? undefined : gpusFromSetting(p.gpus, place.gpusHere, p.launcher),
    runDir: where.runDir,
    measurementCacheDir: p.measurementCache ? where.measurementCacheDir : null,
    profilesPerGpu: p.profilesPerGpu,
  };
  return { cacheDir: where.cacheDir, config };
}
