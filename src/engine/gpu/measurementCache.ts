// Measurements of a program already profiled: an unchanged re-run costs no GPU time. The key
// holds everything that can change the numbers (the binary's bytes, its arguments and how it is
// started, the GPU, the clocks and caches settings, the ncu version, what is collected); only
// complete, ok measurements are stored, each written whole under a temporary name and renamed into
// place, so several processes can share the folder and a reader never sees half an entry. Entries are
// sealed with this installation's key (base/cacheEntry.ts): one edited by anyone else (a
// median of -7 ms, a status flipped to ok) is a miss, measured again. The folder carries our
// marker; clear deletes only entry files of our layout in a marked folder.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { NumberRange, RANGES, rangeProblem } from '../../schema/ranges';
import { installationKey } from '../base/cacheKey';
import { DAMAGED, FOREIGN, readCacheFile, seal, unseal } from '../base/cacheEntry';
import { claimFolder, requireOurs } from '../base/cacheFolder';
import type { BenchOptions } from './options';
import type { SassStalls } from '../profile/sassStalls';
import type { KernelProfile, LineStalls } from '../profile/stalls';
import type { KernelSamples } from './stages/time';
import { timerFor } from './timer';
import { PC_SAMPLING_PERIOD } from './cupti/pcStalls';

/** Everything a measurement depends on besides the GPU's own state. */
interface MeasurementKeyParts {
  /** sha256 of the program's bytes. */
  program: string;
  args: string[];
  runCommand: string[] | null;
  launcher: string[];
  /** Model and driver of the GPU it runs on (or the launcher, when the GPU is on another node). */
  gpu: string;
  clockControl: string;
  /**
   * 'none' when ncu left the caches warm (--cache-control none); absent for ncu's default flush
   * (all), so entries measured before the option existed still answer flushed requests, and for
   * the CUPTI timer, which never flushes.
   */
  cacheControl?: 'none';
  ncuVersion: string;
  samples: number;
  warmup: number;
  /** Mangled kernels timed. */
  kernels: string[];
  /** Metrics and how ncu passes are spent. */
  method: string;
}

/** What a measurement leaves: the launches per kernel group and the program's output (its checksums). */
export interface StoredMeasurement {
  groups: {
    key: string;
    kernel: string;
    blockSize: string | null;
    durations: number[];
    durationSource?: KernelSamples['durationSource'];
    last: KernelProfile | null;
  }[];
  /** The program's stdout (ncu's own lines removed). */
  stdout: string;
  /** Warp-stall samples per source line (a source-stalls entry). */
  lineStalls?: LineStalls[];
  /** The same run's samples per SASS instruction (a source-stalls entry; null when the page had none). */
  sassStalls?: SassStalls | null;
}

/** 2: sealed with the installation's key; entries of 1 are misses. */
/** Format of a sealed measurement entry (the seal's `format`). */
export const MEASUREMENT_FORMAT = 2;
const VERSION = MEASUREMENT_FORMAT;
/** A measurement holds durations and a program's stdout; a bigger file is not ours. */
const MAX_ENTRY_BYTES = 256 * 1024 ** 2;
const SHARD = /^[0-9a-f]{2}$/;
const ENTRY_FILE = /^[0-9a-f]{64}\.json$/;
const TMP_FILE = /^[0-9a-f]{64}\.json\.\d+\.[0-9a-f]{8}\.tmp$/;
/**
 * What a source-stalls entry holds, in its key: 2 = per-line and per-SASS-instruction samples (an
 * entry of 1 had per-line samples only and must not be served as complete).
 */
const SOURCE_STALLS_VERSION = 2;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

function measurementKey(parts: MeasurementKeyParts): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify({ v: VERSION, ...parts }))
    .digest('hex');
}

/** sha256 of a file's bytes, read in chunks. */
function hashFile(file: string): string {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let n: number;
    while ((n = fs.readSync(fd, buf, 0, buf.length, null)) > 0) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

/** A stored measurement in the shape this version writes: every duration a finite, non-negative number. */
function validMeasurement(m: unknown): m is StoredMeasurement {
  const o = m as Partial<StoredMeasurement>;
  if (!o || typeof o !== 'object' || typeof o.stdout !== 'string' || !Array.isArray(o.groups)) return false;
  return o.groups.every(
    g =>
      g &&
      typeof g.key === 'string' &&
      Array.isArray(g.durations) &&
      (g.durationSource === undefined || g.durationSource === 'gpu-time' || g.durationSource === 'kernel-record') &&
      g.durations.every(d => typeof d === 'number' && Number.isFinite(d) && d >= 0),
  );
}

export class MeasurementCache {
  private claimed: boolean | null = null;

  constructor(readonly dir: string) {}

  private fileOf(key: string): string {
    return path.join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  /** The stored measurement, or null when there is none, it cannot be read whole, or this installation did not write it. */
  get(key: string): StoredMeasurement | null {
    let text: string;
    try {
      text = readCacheFile(this.fileOf(key), MAX_ENTRY_BYTES).toString('utf8');
    } catch {
      return null;
    }
    const body = unseal(installationKey(), VERSION, 'measurement', [key], text);
    // Signed by us and still impossible (a duration of 0 or less): a miss, measured again.
    if (body === DAMAGED || body === FOREIGN || !validMeasurement(body) || !body.groups.every(possibleGroup)) return null;
    return body;
  }

  put(key: string, m: StoredMeasurement): void {
    const file = this.fileOf(key);
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    try {
      if (this.claimed === null) this.claimed = claimFolder(this.dir, 'measurement', e => e.isDirectory() && SHARD.test(e.name));
      if (!this.claimed) {
        process.stderr.write(
          `unroll-lens: warning: ${this.dir} is not an Unroll Lens measurement cache (it holds other files and no marker of ours): measurements are not cached there\n`,
        );
        return;
      }
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(tmp, seal(installationKey(), VERSION, 'measurement', [key], m), { flag: 'wx' });
      fs.renameSync(tmp, file);
    } catch {
      // A cache that cannot be written only costs the next run its GPU time.
      fs.rmSync(tmp, { force: true });
    }
  }

  /** The entry files of our layout (and temporary ones) under the folder, as paths. */
  private ownFiles(pattern: RegExp): string[] {
    const out: string[] = [];
    let shards: fs.Dirent[] = [];
    try {
      shards = fs.readdirSync(this.dir, { withFileTypes: true }).filter(e => e.isDirectory() && SHARD.test(e.name));
    } catch {
      /* no folder yet: empty */
    }
    for (const s of shards) {
      try {
        for (const e of fs.readdirSync(path.join(this.dir, s.name), { withFileTypes: true })) {
          if (e.isFile() && pattern.test(e.name) && e.name.startsWith(s.name)) out.push(path.join(this.dir, s.name, e.name));
        }
      } catch {
        /* removed meanwhile */
      }
    }
    return out;
  }

  /** Where it is, how many measurements and their bytes. */
  info(): { location: string; entries: number; bytes: number } {
    let entries = 0;
    let bytes = 0;
    for (const f of this.ownFiles(ENTRY_FILE)) {
      try {
        bytes += fs.lstatSync(f).size;
        entries++;
      } catch {
        /* removed meanwhile */
      }
    }
    return { location: this.dir, entries, bytes };
  }

  /**
   * Deletes every measurement: only in a folder with our marker (else NotOurCacheError, nothing
   * deleted), only entry files of our layout. A writer that loses its temporary file meanwhile
   * only loses its entry.
   */
  clear(): void {
    if (!requireOurs(this.dir, 'measurement')) return;
    for (const f of [...this.ownFiles(ENTRY_FILE), ...this.ownFiles(TMP_FILE)]) fs.rmSync(f, { force: true });
    for (const s of fs.readdirSync(this.dir, { withFileTypes: true })) {
      if (!s.isDirectory() || !SHARD.test(s.name)) continue;
      try {
        fs.rmdirSync(path.join(this.dir, s.name));
      } catch {
        /* not empty: a file of the user's, or an entry just written */
      }
    }
  }
}

/**
 * Whether every number of a stored kernel group is possible (src/schema/ranges.ts): durations
 * > 0 ms, registers 0..255, shares 0..1. An entry edited to a median of -7 ms is a miss, measured
 * again, never shown.
 */
function possibleGroup(g: StoredMeasurement['groups'][number]): boolean {
  if (!g || !Array.isArray(g.durations) || !g.durations.every(d => !rangeProblem(RANGES.durationMs, d))) return false;
  const last = g.last;
  if (last === null) return true;
  if (!last || typeof last !== 'object') return false;
  const orNull = (r: NumberRange, v: unknown) => v === null || !rangeProblem(r, v);
  return (
    orNull(RANGES.durationNs, last.durationNs) &&
    // means over the stall launches (stages/time.ts meanProfile): in range, not necessarily whole
    orNull({ ...RANGES.registers, integer: false }, last.registers) &&
    orNull(RANGES.percent, last.achievedOccupancy) &&
    !!last.stallShare &&
    typeof last.stallShare === 'object' &&
    Object.values(last.stallShare).every(v => !rangeProblem(RANGES.share, v))
  );
}

/** The options a measurement depends on (the bench's and the GPU sweep's). */
export type MeasuredWith = Pick<
  BenchOptions,
  | 'toolchain'
  | 'args'
  | 'runCommand'
  | 'launcher'
  | 'clockControl'
  | 'cacheControl'
  | 'samples'
  | 'warmup'
  | 'passes'
  | 'timer'
  | 'stalls'
  | 'counters'
> & {
  /** The CUPTI timer library that measured (its path names its build key: source, toolkit, CUPTI). */
  timerLibrary?: string;
  /**
   * A source-stalls entry taken from the CUPTI timer's PC samples (native/pcSourceStalls.ts), not
   * from ncu's source page: another method in the key, so neither is ever served for the other.
   */
  lineStallsFrom?: 'pc-sampling';
};

/** The GPU a measurement is taken on, for the key: model and driver, or the launcher when it runs elsewhere. */
function gpuIdentity(o: Pick<BenchOptions, 'toolchain' | 'launcher'>, gpu: number | null): string {
  if (o.launcher.length) return `launcher:${o.launcher.join(' ')}`;
  const g = o.toolchain.gpus[gpu ?? 0];
  return g ? `${g.name}|${g.driverVersion ?? ''}` : 'unknown';
}

/**
 * The key of measuring `program` (its bytes) with these options on `gpu`, timing `kernels`; or,
 * with `sourceText`, of sampling its stalls per line of that source (the lines' text is part of
 * the answer, so it is part of the key).
 */
export function measurementKeyFor(o: MeasuredWith, program: string, gpu: number | null, kernels: string[], sourceText?: string): string {
  const timer = timerFor(o);
  // the CUPTI timer measures another thing (no flush, clocks as they are, PC-sampled stalls): never the ncu entry
  const method =
    sourceText !== undefined
      ? o.lineStallsFrom === 'pc-sampling'
        ? `source-stalls-pc:v${SOURCE_STALLS_VERSION}:${o.timerLibrary ?? ''}:2^${PC_SAMPLING_PERIOD}:${sha256(sourceText)}`
        : `source-stalls:v${SOURCE_STALLS_VERSION}:${sha256(sourceText)}`
      : timer.cacheMethod(o);
  return measurementKey({
    program: hashFile(program),
    args: o.args,
    runCommand: o.runCommand ?? null,
    launcher: o.launcher,
    gpu: gpuIdentity(o, gpu),
    clockControl: o.clockControl,
    // ncu's runs (timing, per-line stalls) flush by default; a warm one is another measurement
    cacheControl: o.cacheControl === 'none' && (sourceText !== undefined || timer.flushesCaches) ? 'none' : undefined,
    ncuVersion: o.toolchain.ncu?.version ?? '',
    samples: o.samples,
    warmup: o.warmup,
    kernels,
    method,
  });
}

export function storedMeasurement(groups: Map<string, KernelSamples>, stdout: string): StoredMeasurement {
  return {
    groups: [...groups].map(([key, g]) => ({
      key,
      kernel: g.kernel,
      blockSize: g.blockSize,
      durations: g.durations,
      ...(g.durationSource ? { durationSource: g.durationSource } : {}),
      last: g.last,
    })),
    stdout,
  };
}

export function measuredGroups(m: StoredMeasurement): Map<string, KernelSamples> {
  return new Map(
    m.groups.map(g => [
      g.key,
      {
        kernel: g.kernel,
        blockSize: g.blockSize,
        durations: g.durations,
        ...(g.durationSource ? { durationSource: g.durationSource } : {}),
        last: g.last,
      },
    ]),
  );
}
