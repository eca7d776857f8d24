// Measurements of a program already profiled: an unchanged re-run costs no GPU time. The key
// holds everything that can change the numbers (the binary's bytes, its arguments and how it is
// started, the GPU, the clocks setting, the ncu version, what is collected); only complete, ok
// measurements are stored, each written whole under a temporary name and renamed into place, so
// several processes can share the folder and a reader never sees half an entry.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { NumberRange, RANGES, rangeProblem } from '../../schema/ranges';
import type { BenchOptions } from './bench';
import type { SassStalls } from './sassStalls';
import type { KernelProfile, LineStalls } from './stalls';
import { KernelSamples, PROFILE_METRICS, STALL_METRICS } from './stages/time';

/** Everything a measurement depends on besides the GPU's own state. */
export interface MeasurementKeyParts {
  /** sha256 of the program's bytes. */
  program: string;
  args: string[];
  runCommand: string[] | null;
  launcher: string[];
  /** Model and driver of the GPU it runs on (or the launcher, when the GPU is on another node). */
  gpu: string;
  clockControl: string;
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
  groups: { key: string; kernel: string; blockSize: string | null; durations: number[]; last: KernelProfile | null }[];
  /** The program's stdout (ncu's own lines removed). */
  stdout: string;
  /** Warp-stall samples per source line (a source-stalls entry). */
  lineStalls?: LineStalls[];
  /** The same run's samples per SASS instruction (a source-stalls entry; null when the page had none). */
  sassStalls?: SassStalls | null;
}

const VERSION = 1;
/**
 * What a source-stalls entry holds, in its key: 2 = per-line and per-SASS-instruction samples (an
 * entry of 1 had per-line samples only and must not be served as complete).
 */
export const SOURCE_STALLS_VERSION = 2;

export function measurementKey(parts: MeasurementKeyParts): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify({ v: VERSION, ...parts }))
    .digest('hex');
}

/** sha256 of a file's bytes, read in chunks. */
export function hashFile(file: string): string {
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

export class MeasurementCache {
  constructor(readonly dir: string) {}

  private fileOf(key: string): string {
    return path.join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  /** The stored measurement, or null when there is none or it cannot be read whole. */
  get(key: string): StoredMeasurement | null {
    let text: string;
    try {
      text = fs.readFileSync(this.fileOf(key), 'utf8');
    } catch {
      return null;
    }
    try {
      const o = JSON.parse(text) as { version?: number; key?: string; measurement?: StoredMeasurement };
      // A damaged or foreign entry is a miss, never a wrong answer.
      if (o.version !== VERSION || o.key !== key || !o.measurement || !Array.isArray(o.measurement.groups)) return null;
      if (typeof o.measurement.stdout !== 'string') return null;
      if (!o.measurement.groups.every(possibleGroup)) return null;
      return o.measurement;
    } catch {
      return null;
    }
  }

  put(key: string, m: StoredMeasurement): void {
    const file = this.fileOf(key);
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(tmp, JSON.stringify({ version: VERSION, key, measurement: m }));
      fs.renameSync(tmp, file);
    } catch {
      // A cache that cannot be written only costs the next run its GPU time.
      fs.rmSync(tmp, { force: true });
    }
  }

  /** Where it is, how many measurements and their bytes. */
  info(): { location: string; entries: number; bytes: number } {
    let entries = 0;
    let bytes = 0;
    let files: string[] = [];
    try {
      files = fs.readdirSync(this.dir, { recursive: true }).map(String);
    } catch {
      /* no folder yet: empty */
    }
    for (const f of files) {
      if (!f.endsWith('.json')) continue;
      try {
        bytes += fs.statSync(path.join(this.dir, f)).size;
        entries++;
      } catch {
        /* removed meanwhile */
      }
    }
    return { location: this.dir, entries, bytes };
  }

  /** Deletes every measurement; a writer that loses its folder meanwhile only loses its entry. */
  clear(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
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
  'toolchain' | 'args' | 'runCommand' | 'launcher' | 'clockControl' | 'samples' | 'warmup' | 'passes'
>;

/** The GPU a measurement is taken on, for the key: model and driver, or the launcher when it runs elsewhere. */
export function gpuIdentity(o: Pick<BenchOptions, 'toolchain' | 'launcher'>, gpu: number | null): string {
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
  const passes = o.passes ?? 'combined';
  const method =
    sourceText !== undefined
      ? `source-stalls:v${SOURCE_STALLS_VERSION}:${crypto.createHash('sha256').update(sourceText).digest('hex')}`
      : `${passes}:${(passes === 'split' ? ['gpu__time_duration.sum', ...STALL_METRICS] : PROFILE_METRICS).join(',')}`;
  return measurementKey({
    program: hashFile(program),
    args: o.args,
    runCommand: o.runCommand ?? null,
    launcher: o.launcher,
    gpu: gpuIdentity(o, gpu),
    clockControl: o.clockControl,
    ncuVersion: o.toolchain.ncu?.version ?? '',
    samples: o.samples,
    warmup: o.warmup,
    kernels,
    method,
  });
}

export function storedMeasurement(groups: Map<string, KernelSamples>, stdout: string): StoredMeasurement {
  return {
    groups: [...groups].map(([key, g]) => ({ key, kernel: g.kernel, blockSize: g.blockSize, durations: g.durations, last: g.last })),
    stdout,
  };
}

export function measuredGroups(m: StoredMeasurement): Map<string, KernelSamples> {
  return new Map(m.groups.map(g => [g.key, { kernel: g.kernel, blockSize: g.blockSize, durations: g.durations, last: g.last }]));
}
