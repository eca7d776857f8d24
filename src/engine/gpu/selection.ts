// Which GPUs a bench run uses and where its files go: the pure mapping from the settings
// (unrollLens.profile.gpus, unrollLens.profile.sharedDirectory, unrollLens.profile.measurementCache)
// and the CLI options (--gpus, --shared-dir, --fresh) to BenchOptions.gpus, cacheDir, runDir
// and measurementCacheDir. The CLI and the server share it.
import * as path from 'path';

/** A GPU selection that cannot be used; the message says what is wrong and what is accepted. */
export class GpuSelectionError extends Error {}

const ACCEPTED = 'empty (the default device), all, or a comma list of CUDA device indices such as 0,1';

/**
 * "" → [] (the default device, environment untouched); "all" → every index below `available`
 * ([] when none is known: the default device); "0,2" → [0, 2]. `available` is the number of GPUs
 * the toolchain sees (nvidia-smi); 0 means unknown (a launcher's nodes), and then indices are not
 * checked against it. Throws GpuSelectionError for words, negative or fractional numbers, empty
 * items, duplicates, and indices ≥ `available` when that is known.
 */
export function parseGpuSelection(text: string, available: number): number[] {
  const t = text.trim();
  if (t === '') return [];
  if (t.toLowerCase() === 'all') return Array.from({ length: Math.max(0, available) }, (_, i) => i);
  const out: number[] = [];
  for (const raw of t.split(',')) {
    const item = raw.trim();
    if (item === '') throw new GpuSelectionError(`GPU list '${text}' has an empty item: use ${ACCEPTED}`);
    if (!/^\d+$/.test(item)) throw new GpuSelectionError(`'${item}' is not a CUDA device index: use ${ACCEPTED}`);
    const n = Number(item);
    if (!Number.isSafeInteger(n)) throw new GpuSelectionError(`'${item}' is not a CUDA device index: use ${ACCEPTED}`);
    if (out.includes(n)) throw new GpuSelectionError(`GPU ${n} is listed twice in '${text}'`);
    if (available > 0 && n >= available) {
      throw new GpuSelectionError(`there is no GPU ${n}: this machine has ${available} (CUDA device indices 0 to ${available - 1})`);
    }
    out.push(n);
  }
  return out;
}

export interface RunLocationInput {
  /** The build cache (defaultCacheDir() or the editor's storage). */
  cacheDir: string;
  /** unrollLens.profile.sharedDirectory or --shared-dir; '' = not set. */
  sharedDirectory: string;
  /** The launcher prefix ([] = runs on this machine). */
  launcher: string[];
  /** The system temp folder (os.tmpdir()). */
  tmpDir: string;
}

export interface RunLocations {
  /** Where programs are built (BenchOptions.cacheDir). */
  cacheDir: string;
  /** Where ncu reports and run files go (BenchOptions.runDir). */
  runDir: string;
  /** The persistent measurement cache (BenchOptions.measurementCacheDir, when the cache is on). */
  measurementCacheDir: string;
}

/** With a launcher, run files go beside the build cache (shared storage the nodes see); without one: the temp folder (undefined). */
export function defaultRunDir(cacheDir: string, launcher: string[]): string | undefined {
  return launcher.length ? path.join(path.dirname(cacheDir), 'runs') : undefined;
}

/**
 * Where a bench run's files go. A shared directory holds everything (builds, runs, measurements);
 * with a launcher but none, runs and measurements go beside the build cache (which a launcher's
 * nodes must then see), never under the system temp folder, which is per node; without a
 * launcher, runs go to the temp folder and measurements beside the build cache.
 */
export function runLocations(o: RunLocationInput): RunLocations {
  if (o.sharedDirectory.trim() !== '') {
    const shared = path.resolve(o.sharedDirectory.trim());
    return {
      cacheDir: path.join(shared, 'builds'),
      runDir: path.join(shared, 'runs'),
      measurementCacheDir: path.join(shared, 'measurements'),
    };
  }
  const beside = path.dirname(o.cacheDir);
  return {
    cacheDir: o.cacheDir,
    runDir: defaultRunDir(o.cacheDir, o.launcher) ?? o.tmpDir,
    measurementCacheDir: path.join(beside, 'measurements'),
  };
}
