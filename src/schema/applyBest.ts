// Whether "Apply best" is offered for a result (issue 25): one rule for the CLI's text, the loop's
// quick fix (server), the message after a sweep (extension) and the panel's button (webview). On a
// GPU the answer was decided once, when the result was made, and recorded in `confidence`
// (engine/sweep/confidence.ts): Apply best only when the best is distinguishable from the file as
// written. A static result (no durations) and a result saved before `confidence` offer it as before.
import type { SweepResult } from './types';

export interface ApplyBestOffer {
  /** Apply best may be offered. */
  offer: boolean;
  /** What the measurements say about it, in one line; null when they say nothing (static rule, older result, no best). */
  why: string | null;
}

export function applyBestOffer(r: Pick<SweepResult, 'best' | 'baseline' | 'static' | 'variants' | 'confidence'>): ApplyBestOffer {
  const best = r.best ? r.variants.find(v => v.id === r.best) : undefined;
  if (!best || best.status !== 'ok' || best.id === r.baseline)
    return { offer: false, why: r.static ? null : (r.confidence?.reason ?? null) };
  const c = r.confidence;
  if (r.static || !c) return { offer: true, why: null };
  if (c.best !== best.id) return { offer: false, why: `the recorded confidence is for ${c.best}, not for the best ${best.id}` };
  return { offer: c.distinguishable, why: c.reason };
}

/** `(95% CI 1.18–1.29)`. */
export function intervalText(level: number, low: number, high: number): string {
  return `(${Math.round(level * 100)}% CI ${low.toFixed(2)}–${high.toFixed(2)})`;
}

/**
 * The lines a text output adds under its best (none without a recorded confidence): whether Apply
 * best is offered and why, how sure the ranking is and, with adaptive sampling, why it stopped.
 * `label` names a variant id (`72=4` → `×4`).
 */
export function confidenceLines(r: Parameters<typeof applyBestOffer>[0], label: (id: string) => string): string[] {
  const c = r.confidence;
  if (!c || r.static) return [];
  const out = [`${applyBestOffer(r).offer ? 'apply best' : 'no change offered'}: ${c.reason}`];
  if (c.runnerUp !== null && c.leadRatio !== null && c.leadLow !== null && c.leadHigh !== null) {
    out.push(
      `${label(c.best)} is first in ${(c.pFirst * 100).toFixed(1)}% of ${c.resamples} bootstrap resamples of ${c.contenders.map(label).join(', ')}; ` +
        `runner-up ${label(c.runnerUp)}: median ${c.leadRatio.toFixed(2)}× ${label(c.best)}'s ${intervalText(c.level, c.leadLow, c.leadHigh)}`,
    );
  }
  if (c.sampling) {
    const s = c.sampling;
    out.push(
      `adaptive sampling: ${s.minSamples} durations per variant, then the leading ones again up to ${s.maxSamples} ` +
        `(${s.rounds} more round${s.rounds === 1 ? '' : 's'}); stopped: ${s.stopped}`,
    );
  }
  return out;
}
