// Progress on stderr. Progress: a one-line bar for interactive terminals, silent otherwise (scan,
// sass). BenchProgressWriter: bench's structured progress, always shown (a redrawn line on a
// terminal, one line per phase change otherwise).
import type { BenchProgress } from '../engine/profile/bench';
import { formatSeconds } from '../engine/report/benchTiming';

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
// bench: structured progress (BenchProgress), on stderr whatever the output format.

const PHASE_WORDS: Record<BenchProgress['phase'], string> = {
  build: 'build',
  check: 'check',
  time: 'time',
  stalls: 'stalls',
  cached: 'cached',
  done: 'done',
  'source-stalls': 'source-line stalls',
};

/**
 * One progress line: `[3/8] 4 · time 12/20 samples · GPU 1 · 14 s elapsed · ~20 s left`.
 * [done/total] counts variants finished (measured, copied, cached or failed); the GPU is shown
 * when the step runs on a chosen one, the estimate once there is one.
 */
export function benchProgressLine(p: BenchProgress): string {
  const parts = [`[${p.done}/${p.total}]${p.variant !== null ? ` ${p.variant}` : ''}`];
  parts.push(p.phase === 'time' && p.samplesWanted > 0 ? `time ${p.samples}/${p.samplesWanted} samples` : PHASE_WORDS[p.phase]);
  if (p.gpu !== null) parts.push(`GPU ${p.gpu}`);
  parts.push(`${formatSeconds(p.elapsedS)} elapsed`);
  if (p.etaS !== null) parts.push(`~${formatSeconds(p.etaS)} left`);
  return parts.join(' · ');
}

/**
 * bench's progress on stderr. On a terminal: one line, redrawn (at most every 50 ms, and at once
 * when a variant changes phase), cleared by done(). Otherwise (logs, CI): one line per phase change
 * of a variant, not one per sample. Lines start with `bench: `.
 */
export class BenchProgressWriter {
  private readonly phases = new Map<string, BenchProgress['phase']>();
  private lastDraw = -Infinity;
  private drawn = false;
  private structured = false;
  private lastLegacy = '';

  constructor(
    private readonly write: (s: string) => void,
    private readonly isTTY: boolean,
    private readonly now: () => number = Date.now,
    private readonly width = 118,
  ) {}

  update(p: BenchProgress): void {
    const key = p.variant ?? '';
    const changed = this.phases.get(key) !== p.phase;
    this.phases.set(key, p.phase);
    this.structured = true;
    this.show(`bench: ${benchProgressLine(p)}`, changed);
  }

  /**
   * A plain message from an engine without structured progress (BenchOptions.onProgress); ignored
   * once update() has been called. Not on a terminal, messages differing only in their numbers
   * (sample counts) give one line.
   */
  legacy(message: string, done: number, total: number): void {
    if (this.structured) return;
    const key = message.replace(/\d+/g, '#');
    const changed = key !== this.lastLegacy;
    this.lastLegacy = key;
    this.show(`bench: [${done}/${total}] ${message}`, changed);
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
