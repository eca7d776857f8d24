// Where the bench's ncu runs go: one or more GPUs, each with a few ncu processes in flight.
//
// ncu serialises profiling through a lock file in $TMPDIR (nsight-compute-lock). Several ncu
// processes on one GPU, sharing that lock, still take turns at profiling while one process's
// start-up, program set-up and report writing overlap another's profiling: on an H100 two at a
// time measured 7.2 s for two variants against 9.5 s one after the other, with medians within
// 0.3% (docs/measurements.md). Each GPU of a multi-GPU run gets its own lock folder, so GPUs
// profile at the same time; CUDA_VISIBLE_DEVICES (in PCI bus order, as nvidia-smi counts) pins
// each process to its GPU.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { GpuRun } from './stages/time';

/** One place an ncu process can run. */
export interface GpuSlot {
  /** CUDA device index; null: the default device, environment untouched. */
  gpu: number | null;
  /** Environment of the processes run here. */
  env: Record<string, string> | undefined;
}

/** ncu processes in flight per GPU (measured: two overlap start-up with profiling; see above). */
export const PROFILES_PER_GPU = 2;

/**
 * The slots for `gpus` (CUDA indices; empty: the default device), `perGpu` per GPU. Without a
 * launcher each selected GPU gets its own lock folder under `lockRoot`; with one, the other
 * node's temp folder is its own business and only CUDA_VISIBLE_DEVICES is passed.
 */
export function gpuSlots(gpus: number[] | undefined, perGpu: number, launcher: string[], lockRoot: string): GpuSlot[] {
  const n = Math.max(1, Math.floor(perGpu));
  if (!gpus?.length) return Array.from({ length: n }, () => ({ gpu: null, env: undefined }));
  return gpus.flatMap(gpu => {
    const env: Record<string, string> = { CUDA_VISIBLE_DEVICES: String(gpu), CUDA_DEVICE_ORDER: 'PCI_BUS_ID' };
    if (!launcher.length && gpus.length > 1) {
      const lock = path.join(lockRoot, `gpu${gpu}`);
      fs.mkdirSync(lock, { recursive: true });
      env.TMPDIR = lock;
    }
    return Array.from({ length: n }, () => ({ gpu, env }));
  });
}

/** Per-user folder for the per-GPU ncu lock folders: shared by every Unroll Lens process of this user. */
export function defaultLockRoot(): string {
  let user = 'user';
  try {
    user = String(os.userInfo().uid);
  } catch {
    /* no passwd entry: one folder for all */
  }
  return path.join(os.tmpdir(), `unroll-lens-ncu-${user}`);
}

/** GPU busy time per device, from the ncu processes' start and end times. */
export class GpuClock {
  private readonly runs = new Map<number | null, GpuRun[]>();

  add(gpu: number | null, run: GpuRun): void {
    this.runs.set(gpu, [...(this.runs.get(gpu) ?? []), run]);
  }

  get count(): number {
    return [...this.runs.values()].reduce((a, r) => a + r.length, 0);
  }

  /** Seconds of every run summed (runs that overlap on one GPU count each). */
  busyS(kind?: GpuRun['kind']): number {
    let ms = 0;
    for (const list of this.runs.values()) for (const r of list) if (!kind || r.kind === kind) ms += r.endMs - r.startMs;
    return ms / 1000;
  }

  /** Seconds each GPU ran nothing between its first run's start and its last run's end, summed over GPUs. */
  idleS(): number {
    let ms = 0;
    for (const list of this.runs.values()) {
      const sorted = [...list].sort((a, b) => a.startMs - b.startMs);
      let end = sorted[0]?.startMs ?? 0;
      for (const r of sorted) {
        if (r.startMs > end) ms += r.startMs - end;
        end = Math.max(end, r.endMs);
      }
    }
    return ms / 1000;
  }
}

/**
 * Turns on one GPU: measurements share it, a retry takes it alone (a variant that failed while
 * others ran beside it, out of memory or out of time waiting for ncu's lock, gets a fair try).
 */
export class GpuTurns {
  private sharing = 0;
  private alone = false;
  private waiting: (() => void)[] = [];

  async shared<T>(f: () => Promise<T>): Promise<T> {
    while (this.alone) await this.wait();
    this.sharing++;
    try {
      return await f();
    } finally {
      this.sharing--;
      this.wake();
    }
  }

  /**
   * `f` sharing the GPU; when it fails (a status other than ok or cancelled) and `retryAlone()`
   * says so, once more with the GPU to itself.
   */
  async sharedThenAlone<T extends { status: string }>(f: () => Promise<T>, retryAlone: () => boolean, onRetry?: () => void): Promise<T> {
    const r = await this.shared(f);
    if (r.status === 'ok' || r.status === 'cancelled' || !retryAlone()) return r;
    onRetry?.();
    return this.exclusive(f);
  }

  async exclusive<T>(f: () => Promise<T>): Promise<T> {
    while (this.alone || this.sharing) await this.wait();
    this.alone = true;
    try {
      return await f();
    } finally {
      this.alone = false;
      this.wake();
    }
  }

  private wait(): Promise<void> {
    return new Promise(resolve => this.waiting.push(resolve));
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const resolve of w) resolve();
  }
}
