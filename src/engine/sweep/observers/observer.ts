// Live updates from a running sweep: a progress line per step of each variant, and every
// finished variant with the partial result (the panel redraws from it; complete stays false
// until the sweep ends).
import type { SweepResult, SweepVariant } from '../../../schema/types';
import type { SweepProgress } from '../../../schema/progress';

export interface SweepObserver {
  onProgress?(p: SweepProgress): void;
  /** A finished variant and a snapshot of the result so far (safe to keep). */
  onVariant?(v: SweepVariant, partial: SweepResult): void;
}

/** Every observer gets every callback; one throwing does not stop the sweep or the others. */
export function combineObservers(...observers: (SweepObserver | undefined)[]): SweepObserver {
  const list = observers.filter((o): o is SweepObserver => !!o);
  const safe = (f: () => void) => {
    try {
      f();
    } catch {
      /* an observer's bug must not break the measurement */
    }
  };
  return {
    onProgress: p => list.forEach(o => o.onProgress && safe(() => o.onProgress!(p))),
    onVariant: (v, r) => list.forEach(o => o.onVariant && safe(() => o.onVariant!(v, r))),
  };
}

const PHASE_TEXT: Record<SweepProgress['phase'], string> = {
  start: 'starting',
  build: 'building',
  disassemble: 'reading SASS',
  check: 'checking the result',
  time: 'timing on the GPU',
  stalls: 'sampling stalls',
  'source-stalls': 'sampling stalls per source line',
  reuse: 'same machine code as an earlier variant',
  cached: 'measured before (measurement cache)',
  done: 'done',
};

/** Variants finished of all: `3/8`, or `3/≤38` when the total is an upper bound. */
export function progressCount(done: number, total: number, atMost = false): string {
  return `${done}/${atMost && total > done ? '≤' : ''}${Math.max(done, total)}`;
}

/** A plain progress line for logs and the CLI's stderr. */
export function progressLine(
  done: number,
  total: number,
  label: string | null,
  phase: SweepProgress['phase'],
  detail?: string,
  atMost = false,
): string {
  const what = `${PHASE_TEXT[phase]}${detail ? ` (${detail})` : ''}`;
  return `[${progressCount(done, total, atMost)}] ${label ? `${label}: ` : ''}${what}`;
}
