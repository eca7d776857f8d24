// GPU benchmark results as the editor shows them: a table per loop in the hover, and per-line
// warp-stall samples (hover and inline decorations).
import type { SourceLineStalls, SweepResult } from '../../schema/types';
import { benchJson } from '../sweep/bench';
import { conditionsText } from '../../schema/measurementText';
import { runTimingText } from '../../schema/runTimingText';
import { applyBestOffer } from '../../schema/applyBest';

function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? '–' : `${(x * 100).toFixed(1)}%`;
}

function ms(x: number | null): string {
  return x === null ? '–' : x < 0.1 ? `${(x * 1000).toFixed(1)} µs` : `${x.toFixed(3)} ms`;
}

export function benchMarkdown(result: SweepResult): string {
  const r = benchJson(result);
  const ok = r.variants.filter(v => v.status === 'ok' && v.medianMs !== null);
  const fastest = ok.length ? ok.reduce((a, b) => (b.medianMs! < a.medianMs! ? b : a)) : null;
  const rows = r.variants.map(v => {
    const top = v.stallShare
      ? Object.entries(v.stallShare)
          .filter(([k]) => k !== 'selected')
          .sort((a, b) => b[1] - a[1])[0]
      : undefined;
    const speed = v.speedup === null ? '–' : `${v.speedup.toFixed(2)}×${v.withinNoise && v.label !== 'as-written' ? ' (noise)' : ''}`;
    const label = v === fastest ? `**${v.label}**` : v.label;
    const same = v.identicalTo !== null ? ` (same code as ${v.identicalTo})` : v.cached ? ' (cached)' : '';
    return `| ${label} | ${v.status}${v.message ? ' ⚠' : ''}${same} | ${ms(v.medianMs)} | ${ms(v.iqrMs)} | ${pct(v.cv)} | ${speed} | ${pct(v.stallShare?.no_instruction)} | ${top ? `${top[0]} ${pct(top[1])}` : '–'} | ${v.kernelInstructions ?? '–'} |`;
  });
  const problems = r.variants.filter(v => v.message).map(v => `- ${v.label}: ${v.status}: ${v.message!.split('\n')[0]}`);
  return [
    `**GPU benchmark** of \`${r.kernel}\` on ${r.gpu ?? 'the GPU'} (${conditionsText(result.measurement, r.variants[0]?.samples ?? 0, result.clockControl)}); speedup vs the file as written, **bold** = fastest:`,
    [
      '| variant | status | median | IQR | CV | speedup | no_instruction | top stall | SASS instr |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n'),
    ...problems,
    // whether Apply best is offered, and why (issue 25)
    ...(result.confidence ? [`${applyBestOffer(result).offer ? 'Apply best' : 'No change offered'}: ${result.confidence.reason}.`] : []),
    ...(r.instantiations
      ? [
          `Also measured: ${r.instantiations
            .slice(1)
            .map(x => `\`${x.kernel}\`${x.blockSize ? ` ${x.blockSize}` : ''}`)
            .join(', ')} (see the Unroll Lens output or \`unroll-lens bench --json\`).`,
        ]
      : []),
    ...(result.timing && runTimingText(result.timing) ? [`_${runTimingText(result.timing)}_`] : []),
  ].join('\n\n');
}

/** Stall samples on one source line, relative to all sampled lines of the kernel. */
export function lineStallText(l: Pick<SourceLineStalls, 'samples' | 'stallShare'>, totalSamples: number): string {
  const top = Object.entries(l.stallShare)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([k, v]) => `${k} ${pct(v)}`)
    .join(', ');
  return `${pct(l.samples / Math.max(1, totalSamples))} of stall samples${top ? ` · ${top}` : ''}`;
}

export function lineStallsMarkdown(lines: SourceLineStalls[], line: number): string | null {
  const l = lines.find(x => x.line === line && x.samples > 0);
  if (!l) return null;
  const total = lines.reduce((a, x) => a + x.samples, 0);
  return `**Warp stalls on this line** (ncu source counters, file as written): ${l.samples.toLocaleString('en-US')} samples = ${lineStallText(l, total)}`;
}
