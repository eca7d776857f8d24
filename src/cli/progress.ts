// Progress on stderr. Progress: a one-line bar for interactive terminals, silent otherwise (scan,
// sass). BenchProgressWriter: bench's structured progress, always shown (a redrawn line on a
// terminal, one line per phase change otherwise).
import { benchLabelOfId, progressCount } from '../engine';
import type { SweepProgress } from '../schema/progress';
import { formatSeconds } from '../schema/runTimingText';

export { formatSeconds };

/** A one-line progress bar on stderr for interactive terminals; silent otherwise. */
export class Progress {
  private done_ = 0;
  private lastDraw = 0;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly write: ((s: string) => void) | null,
  ) {}

  tick(item: string): void {
    this.done_++;
    if (!this.write) return;
    const now = Date.now();
    if (now - this.lastDraw < 50 && this.done_ < this.total) return;
    this.lastDraw = now;
    const width = 24;
    const filled = Math.round((this.done_ / Math.max(1, this.total)) * width);
    const name = item.length > 40 ? '…' + item.slice(-39) : item;
    this.write(`\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done_}/${this.total} ${name}\x1b[K`);
  }

  done(): void {
    if (this.write && this.total > 0) this.write('\r\x1b[K');
  }
}

// ---------------------------------------------------------------------------------------------
// bench: the sweep's progress (SweepProgress), on stderr whatever the output format.

const PHASE_WORDS: Record<SweepProgress['phase'], string> = {
  start: 'start',
  build: 'build',
  disassemble: 'SASS',
  check: 'check',
  time: 'time',
  stalls: 'stalls',
  reuse: 'same machine code',
  cached: 'cached',
  done: 'done',
  'source-stalls': 'source-line stalls',
};

/**
 * One progress line: `[3/8] 4 · time 12/20 samples · GPU 1 · 14 s elapsed · ~20 s left`.
 * [done/total] counts variants finished (measured, copied, cached or failed); the GPU is shown
 * when the step runs on a chosen one, the estimate once there is one.
 */
export function benchProgressLine(p: SweepProgress): string {
  const parts = [`[${progressCount(p.done, p.total, p.atMost)}]${p.variant !== null ? ` ${benchLabelOfId(p.variant)}` : ''}`];
  const timing = (p.phase === 'time' || p.phase === 'stalls') && p.samplesWanted;
  parts.push(timing ? `${p.phase} ${p.samples ?? 0}/${p.samplesWanted} samples` : PHASE_WORDS[p.phase]);
  if (p.gpu !== null && p.gpu !== undefined) parts.push(`GPU ${p.gpu}`);
  parts.push(`${formatSeconds(p.elapsedS ?? 0)} elapsed`);
  if (p.etaS !== null && p.etaS !== undefined) parts.push(`~${formatSeconds(p.etaS)} left`);
  return parts.join(' · ');
}

/**
 * bench's progress on stderr. On a terminal: one line, redrawn (at most every 50 ms, and at once
 * when a variant changes phase), cleared by done(). Otherwise (logs, CI): one line per phase change
 * of a variant, not one per sample. Lines start with `bench: `.
 */
export class BenchProgressWriter {
  private readonly phases = new Map<string, SweepProgress['phase']>();
  private lastDraw = -Infinity;
  private drawn = false;

  constructor(
    private readonly write: (s: string) => void,
    private readonly isTTY: boolean,
    private readonly now: () => number = Date.now,
    private readonly width = 118,
  ) {}

  update(p: SweepProgress): void {
    const key = p.variant ?? '';
    const changed = this.phases.get(key) !== p.phase;
    this.phases.set(key, p.phase);
    this.show(`bench: ${benchProgressLine(p)}`, changed);
  }

  done(): void {
    if (this.isTTY && this.drawn) this.write('\r\x1b[K');
    this.drawn = false;
  }

  private show(line: string, changed: boolean): void {
    if (!this.isTTY) {
      if (changed) this.write(`${line}\n`);
      return;
    }
    const t = this.now();
    if (!changed && t - this.lastDraw < 50) return;
    this.lastDraw = t;
    this.drawn = true;
    this.write(`\r${line.length > this.width ? `${line.slice(0, this.width - 1)}…` : line}\x1b[K`);
  }
}
