// One configuration per chart: its datasets, legend entries, reference lines, axes and tooltip
// lines, from the view model and the theme.
import type { ChartConfiguration, ChartDataset, Scale } from 'chart.js';
import { fmtBytes, fmtCompact, fmtFactor, fmtInt, fmtPercent, fmtRange, fmtRatio, fmtShare, fmtSpeedup, fmtUs } from './format';
import { NO_INSTRUCTION, OTHER_STALLS, stallLabel } from './model';
import type { VariantView, ViewModel } from './model';
import { achievedSeries } from './occupancy';
import { faded, hatched } from './theme';
import type { Theme } from './theme';
import type { DecorOptions, LegendEntry, RefLine } from './chartDecor';
import type { BaseOptions, decoratedOptions, Outline, TooltipLabel } from './chartOptions';

/** What a chart's configuration is built from. */
export interface ChartKit {
  m: ViewModel;
  t: Theme;
  /** The variant axis's labels, one per variant. */
  labels: string[][];
  base: BaseOptions;
  /** Per-bar outline: the selected variant's, the contrast border in HC themes. */
  outline(): Outline;
  /** The base options with this chart's decor, scales and tooltip lines. */
  decorate(decor: DecorOptions, scales: Record<string, unknown>, tooltipLabel: TooltipLabel): ReturnType<typeof decoratedOptions>;
}

export function speedupChart(k: ChartKit): ChartConfiguration {
  const { m, t, labels, base } = k;
  const noise = hatched(t.grey);
  const fill = m.variants.map(x => {
    const s = x.num('speedup');
    if (x.withinNoise) return noise;
    const c = s !== null && s >= 1 ? t.green : t.orange;
    return x.ref ? faded(c, 0.45) : c;
  });
  const refLines: RefLine[] = [{ value: 1, color: t.foreground, label: `Baseline (${m.baseline?.v.label ?? m.result.baseline}) = 1×` }];
  const legend: LegendEntry[] = [
    { text: 'Faster than the baseline', fill: t.green },
    { text: 'Slower than the baseline', fill: t.orange },
    { text: 'Within noise (same code, or IQRs within 3 % drift)', fill: noise, stroke: t.grey, lineWidth: 1 },
    // Faded bars can be green or orange: the swatch shows fading on a neutral colour.
    ...(m.variants.some(x => x.ref) ? [{ text: 'Identical code (= ×N), measured once', fill: faded(t.foreground, 0.35) }] : []),
    { text: 'IQR whiskers', fill: 'transparent', stroke: t.foreground, lineWidth: 2, datasetIndex: undefined },
    { text: refLines[0].label, fill: 'transparent', stroke: t.foreground, lineWidth: 2, lineDash: [6, 4], refLine: 0 },
  ];
  const data = m.variants.map(x => (x.ok ? x.num('speedup') : null));
  const top = Math.max(1, ...m.variants.map(x => x.speedupHigh ?? x.num('speedup') ?? 0));
  const decor: DecorOptions = {
    refLines,
    legend,
    whiskers: { datasetIndex: 0, low: m.variants.map(x => x.speedupLow), high: m.variants.map(x => x.speedupHigh), color: t.foreground },
  };
  return {
    type: 'bar',
    data: { labels, datasets: [{ label: 'Speedup (median)', data, backgroundColor: fill, ...k.outline(), barPercentage: 0.8 }] },
    options: k.decorate(
      decor,
      {
        y: ratioAxis(base, t, top, 'Speedup (×, higher is faster)'),
      },
      item => {
        const x = m.variants[item.dataIndex];
        if (!x) return '';
        const lines = [`speedup ${fmtSpeedup(x.num('speedup'))}`];
        if (x.speedupLow !== null && x.speedupHigh !== null) lines.push(`IQR ${x.speedupLow.toFixed(3)}–${x.speedupHigh.toFixed(3)}×`);
        lines.push(`median ${fmtUs(x.num('medianMs'))} µs`);
        if (x.withinNoise !== null) lines.push(x.withinNoise ? 'within noise of the baseline' : "outside the baseline's noise");
        return lines;
      },
    ) as ChartConfiguration['options'],
  };
}

/** Measured slowdown bars (solid) or the predicted middle (hatched), the predicted range as whiskers. */
export function icacheChart(k: ChartKit): ChartConfiguration {
  const { m, t, labels, base } = k;
  const predictedFill = hatched(t.grey);
  const isMeasured = (x: VariantView) => x.icache?.shown === 'measured' && !!x.icache.measured;
  const data = m.variants.map(x => {
    const c = x.icache;
    if (!c) return null;
    if (isMeasured(x)) return c.measured!.slowdown;
    return c.predicted ? (c.predicted.low + c.predicted.high) / 2 : null;
  });
  const fill = m.variants.map(x => (isMeasured(x) ? t.blue : predictedFill));
  const low = m.variants.map(x => x.icache?.predicted?.low ?? null);
  const high = m.variants.map(x => x.icache?.predicted?.high ?? null);
  const refLines: RefLine[] = [{ value: 1, color: t.foreground, label: 'No slowdown = 1×' }];
  const legend: LegendEntry[] = [
    { text: `Measured (median ÷ ${m.icacheReference ?? 'reference'})`, fill: t.blue },
    { text: 'Predicted (no GPU run yet)', fill: predictedFill, stroke: t.grey, lineWidth: 1 },
    { text: 'Predicted range (i-cache model)', fill: 'transparent', stroke: t.foreground, lineWidth: 2 },
    { text: refLines[0].label, fill: 'transparent', stroke: t.foreground, lineWidth: 2, lineDash: [6, 4], refLine: 0 },
  ];
  const top = Math.max(1, ...data.map(v => v ?? 0), ...high.map(v => v ?? 0));
  const decor: DecorOptions = { refLines, legend, whiskers: { datasetIndex: 0, low, high, color: t.foreground } };
  return {
    type: 'bar',
    data: { labels, datasets: [{ label: 'I-cache slowdown', data, backgroundColor: fill, ...k.outline(), barPercentage: 0.8 }] },
    options: k.decorate(
      decor,
      {
        y: ratioAxis(base, t, top, 'Slowdown (×, higher is slower)'),
      },
      item => {
        const x = m.variants[item.dataIndex];
        const c = x?.icache;
        if (!c) return '';
        const lines: string[] = [];
        if (isMeasured(x)) {
          lines.push(`measured ${c.measured!.slowdown.toFixed(2)}× (median ÷ ${c.reference ?? 'reference'})`);
          if (c.measured!.noInstruction !== null) lines.push(`no_instruction ${fmtShare(c.measured!.noInstruction)} of stalls`);
        }
        if (c.shown === 'not-icache' && c.measured) {
          // The bar is the model's prediction: the measured slowdown is not the i-cache's (issue 22).
          lines.push(`measured ${c.measured.slowdown.toFixed(2)}× (median ÷ ${c.reference ?? 'reference'}), not i-cache`);
          if (c.measured.attribution) lines.push(c.measured.attribution.why);
        }
        if (c.predicted) lines.push(`predicted ${fmtRange(c.predicted)}${c.warpsPerSm !== null ? ` at ${c.warpsPerSm} warps/SM` : ''}`);
        if (c.bytes !== null) lines.push(`hot loop ${fmtBytes(c.bytes)}`);
        return lines;
      },
    ) as ChartConfiguration['options'],
  };
}

export function stallsChart(k: ChartKit): ChartConfiguration {
  const { m, t, labels, base } = k;
  const palette = [t.blue, t.green, t.yellow, t.purple];
  const colour = (g: string, i: number) => (g === NO_INSTRUCTION ? t.red : g === OTHER_STALLS ? t.grey : palette[(i - 1) % palette.length]);
  const outline = k.outline();
  const datasets: ChartDataset<'bar'>[] = m.stallGroups.map((g, i) => ({
    label: stallLabel(g),
    data: m.variants.map(x => (x.stallGroups[i] === null ? null : (x.stallGroups[i] as number) * 100)),
    backgroundColor: m.variants.map(x => (x.ref ? faded(colour(g, i), 0.55) : colour(g, i))),
    ...outline,
    stack: 'stalls',
    barPercentage: 0.8,
  }));
  const legend: LegendEntry[] = m.stallGroups.map((g, i) => ({ text: stallLabel(g), fill: colour(g, i), datasetIndex: i }));
  return {
    type: 'bar',
    data: { labels, datasets },
    options: k.decorate(
      { refLines: [], legend, whiskers: null },
      {
        x: { ...base.options.scales.x, stacked: true },
        y: {
          stacked: true,
          min: 0,
          max: 100,
          ticks: { ...base.tick, callback: (v: string | number) => `${v}%` },
          grid: { color: t.grid },
          border: { color: t.border },
          title: base.title('Share of warp stalls (%)'),
        },
      },
      item => {
        const v = item.raw as number | null;
        return `${item.dataset.label}: ${fmtShare(v === null ? null : v / 100)}`;
      },
    ) as ChartConfiguration['options'],
  };
}

export function sizeChart(k: ChartKit): ChartConfiguration {
  const { m, t, labels, base } = k;
  const loopColours = [t.purple, t.green, t.yellow, t.orange, t.blue];
  const outline = k.outline();
  const series: { label: string; colour: string; value: (x: VariantView) => number | null }[] = [
    { label: 'Kernel SASS bytes', colour: t.blue, value: x => x.num('kernelBytes') },
    ...m.loopLines.map((line, i) => ({
      label: m.loopLines.length > 1 ? `Loop L${line} SASS bytes` : 'Loop SASS bytes',
      colour: loopColours[i % loopColours.length],
      value: (x: VariantView) => x.loopBytes(line),
    })),
  ];
  const datasets: ChartDataset<'bar'>[] = series.map(s => ({
    label: s.label,
    data: m.variants.map(x => (x.ok ? s.value(x) : null)),
    backgroundColor: m.variants.map(x => (x.ref ? faded(s.colour, 0.45) : s.colour)),
    ...outline,
    barPercentage: 0.9,
    categoryPercentage: 0.8,
  }));
  const budget = m.result.icacheBudgetBytes;
  const refLines: RefLine[] =
    budget > 0 ? [{ value: budget, color: t.red, label: `I-cache budget ${fmtBytes(budget)} (${m.result.arch})` }] : [];
  const legend: LegendEntry[] = [
    ...series.map((s, i) => ({ text: s.label, fill: s.colour, datasetIndex: i })),
    ...refLines.map((r, i) => ({ text: r.label, fill: 'transparent', stroke: r.color, lineWidth: 2, lineDash: [6, 4], refLine: i })),
    ...(m.variants.some(x => x.ref) ? [{ text: 'Identical code (= ×N)', fill: faded(t.blue, 0.45) }] : []),
  ];
  const values = datasets.flatMap(d => d.data as (number | null)[]).filter((v): v is number => v !== null && v > 0);
  const lo = Math.min(...values, budget || Infinity);
  const hi = Math.max(...values, budget || 0);
  // Ticks at powers of 4 bytes (256 B, 1 KiB, 4 KiB, …): round numbers for code sizes.
  const min = values.length ? 4 ** Math.floor(Math.log(lo) / Math.log(4)) : 256;
  const max = values.length ? 4 ** Math.ceil(Math.log(hi * 1.15) / Math.log(4)) : 65536;
  return {
    type: 'bar',
    data: { labels, datasets },
    options: k.decorate(
      { refLines, legend, whiskers: null },
      {
        y: {
          type: 'logarithmic',
          min,
          max,
          afterBuildTicks: (scale: Scale) => {
            const ticks = [];
            for (let v = min; v <= max; v *= 4) ticks.push({ value: v });
            scale.ticks = ticks;
          },
          ticks: { ...base.tick, callback: (v: string | number) => fmtBytes(Number(v)) },
          grid: { color: t.grid },
          border: { color: t.border },
          title: base.title('SASS bytes (log scale)'),
        },
      },
      item => `${item.dataset.label}: ${fmtInt(item.raw as number | null)} B`,
    ) as ChartConfiguration['options'],
  };
}

export function resourcesChart(k: ChartKit): ChartConfiguration {
  const { m, t, labels } = k;
  const spill = (x: VariantView) => {
    const s = x.num('spillStores');
    const l = x.num('spillLoads');
    return s === null && l === null ? null : (s ?? 0) + (l ?? 0);
  };
  // Spill bytes get their own axis when there are any: thousands of bytes would flatten the
  // register bars (a few dozen) on a shared one.
  const spills = m.variants.map(x => (x.ok ? spill(x) : null));
  const spillAxis = spills.some(v => v !== null && v > 0);
  const registers = m.variants.map(x => (x.ok ? x.num('registers') : null));
  const datasets = resourceDatasets(k, registers, spills, spillAxis);
  const achieved = achievedSeries(m);
  const legend: LegendEntry[] = [
    { text: 'Registers / thread', fill: t.blue, datasetIndex: 0 },
    { text: 'Spill bytes (stores + loads)', fill: t.red, datasetIndex: 1 },
    { text: 'Theoretical occupancy (%)', fill: 'transparent', stroke: t.green, lineWidth: 2, datasetIndex: 2 },
    ...(achieved ? [{ text: achieved, fill: 'transparent', stroke: t.yellow, lineWidth: 2, lineDash: [5, 3], datasetIndex: 3 }] : []),
  ];
  return {
    type: 'bar',
    data: { labels, datasets },
    options: k.decorate({ refLines: [], legend, whiskers: null }, resourceScales(k, registers, spills, spillAxis), item => {
      const v = item.raw as number | null;
      if (item.dataset.yAxisID === 'y1') return `${item.dataset.label}: ${fmtPercent(v)}`;
      return `${item.dataset.label}: ${fmtInt(v)}`;
    }) as ChartConfiguration['options'],
  };
}

/** Registers and spill bars (spills on their own axis `ys` when any), occupancy lines on the right axis. */
function resourceDatasets(k: ChartKit, registers: (number | null)[], spills: (number | null)[], spillAxis: boolean): ChartDataset<'bar'>[] {
  const { m, t } = k;
  const achieved = achievedSeries(m);
  const outline = k.outline();
  const bar = (label: string, colour: string, data: (number | null)[], axis: string): ChartDataset<'bar'> => ({
    label,
    data,
    backgroundColor: m.variants.map(x => (x.ref ? faded(colour, 0.45) : colour)),
    ...outline,
    yAxisID: axis,
    barPercentage: 0.9,
    categoryPercentage: 0.75,
    order: 2,
  });
  const line = (label: string, colour: string, value: (x: VariantView) => number | null, dash: number[]) => ({
    type: 'line' as const,
    label,
    data: m.variants.map(x => (x.ok ? value(x) : null)),
    borderColor: colour,
    backgroundColor: colour,
    borderWidth: 2,
    borderDash: dash,
    pointRadius: 4,
    pointHoverRadius: 6,
    spanGaps: false,
    yAxisID: 'y1',
    order: 1,
    clip: false as const, // 100% sits on the top edge: draw the points whole
  });
  return [
    bar('Registers / thread', t.blue, registers, 'y'),
    bar('Spill bytes (stores + loads)', t.red, spills, spillAxis ? 'ys' : 'y'),
    line(
      'Theoretical occupancy (%)',
      t.green,
      x => {
        const o = x.num('occupancy');
        return o === null ? null : o * 100;
      },
      [],
    ),
    ...(achieved ? [line(achieved, t.yellow, x => x.num('achievedOccupancy'), [5, 3])] : []),
  ] as ChartDataset<'bar'>[];
}

/** Registers (and spills without their own axis) on the left, spill bytes beside them, occupancy % on the right. */
function resourceScales(k: ChartKit, registers: (number | null)[], spills: (number | null)[], spillAxis: boolean) {
  const { t, base } = k;
  const maxOf = (vs: (number | null)[]) => Math.max(0, ...vs.filter((v): v is number => v !== null));
  const maxLeft = Math.max(8, maxOf(registers), spillAxis ? 0 : maxOf(spills));
  return {
    y: {
      position: 'left',
      beginAtZero: true,
      suggestedMax: Math.ceil(maxLeft * 1.1),
      ticks: { ...base.tick, precision: 0 },
      grid: { color: t.grid },
      border: { color: t.border },
      title: base.title(spillAxis ? 'Registers per thread' : 'Registers per thread · spill bytes'),
    },
    ...(spillAxis
      ? {
          ys: {
            position: 'left',
            beginAtZero: true,
            suggestedMax: Math.ceil(maxOf(spills) * 1.1),
            ticks: { ...base.tick, color: t.red, precision: 0 },
            grid: { display: false },
            border: { color: t.red },
            title: { ...base.title('Spill bytes'), color: t.red },
          },
        }
      : {}),
    y1: {
      position: 'right',
      min: 0,
      max: 100,
      ticks: { ...base.tick, callback: (v: string | number) => `${v}%` },
      grid: { display: false },
      border: { color: t.border },
      title: base.title('Occupancy (%)'),
    },
  };
}

export function unrollChart(k: ChartKit): ChartConfiguration {
  const { m, t, labels, base } = k;
  const colours = [t.purple, t.green, t.yellow, t.orange, t.blue];
  const outline = k.outline();
  const loops = m.result.loops;
  const requested = (x: VariantView, line: string): number | null => {
    const f = x.v.factors[line] ?? (Object.keys(x.v.factors).length ? null : (loops.find(l => String(l.line) === line)?.written ?? null));
    if (typeof f === 'number') return f;
    const trip = loops.find(l => String(l.line) === line)?.tripCount;
    return f === 'full' && typeof trip === 'number' ? trip : null;
  };
  const datasets = [
    ...m.loopLines.map((line, i) => ({
      label: m.loopLines.length > 1 ? `L${line} effective unroll` : 'Effective unroll (nvcc)',
      data: m.variants.map(x => (x.ok ? x.effectiveUnroll(line) : null)),
      backgroundColor: m.variants.map(x => (x.ref ? faded(colours[i % colours.length], 0.45) : colours[i % colours.length])),
      ...outline,
      barPercentage: 0.85,
      order: 2,
    })),
    ...m.loopLines.map((line, i) => ({
      type: 'line' as const,
      label: m.loopLines.length > 1 ? `L${line} requested` : 'Requested factor',
      data: m.variants.map(x => (x.ok ? requested(x, line) : null)),
      showLine: false,
      pointStyle: 'crossRot' as const,
      pointRadius: 8,
      pointHoverRadius: 9,
      borderWidth: 2,
      borderColor: m.loopLines.length > 1 ? colours[i % colours.length] : t.foreground,
      backgroundColor: 'transparent',
      order: 1,
    })),
  ] as ChartDataset<'bar'>[];
  const n = m.loopLines.length;
  const legend: LegendEntry[] = datasets.map((d, i) => ({
    text: d.label ?? '',
    fill: i < n ? colours[i % colours.length] : 'transparent',
    stroke: i < n ? undefined : String((d as { borderColor?: string }).borderColor),
    lineWidth: i < n ? 0 : 2,
    datasetIndex: i,
  }));
  if (m.variants.some(x => x.ref)) legend.push({ text: 'Identical code (= ×N)', fill: faded(colours[0], 0.45) });
  const values = datasets.flatMap(d => d.data as (number | null)[]).filter((v): v is number => v !== null && v > 0);
  const max = 2 ** Math.ceil(Math.log2(Math.max(2, ...values) * 1.2));
  return {
    type: 'bar',
    data: { labels, datasets },
    options: k.decorate(
      { refLines: [], legend, whiskers: null },
      {
        y: {
          type: 'logarithmic',
          min: 0.5,
          max,
          afterBuildTicks: (scale: Scale) => {
            const ticks = [];
            const step = max > 256 ? 4 : 2;
            for (let v = 1; v <= max; v *= step) ticks.push({ value: v });
            scale.ticks = ticks;
          },
          ticks: { ...base.tick, callback: (v: string | number) => fmtFactor(Number(v)) },
          grid: { color: t.grid },
          border: { color: t.border },
          title: base.title('Copies per machine-code iteration (log)'),
        },
      },
      item => {
        const x = m.variants[item.dataIndex];
        const line = m.loopLines[item.datasetIndex % n];
        const v = item.raw as number | null;
        if (item.datasetIndex >= n) return `${item.dataset.label}: ${v === null ? 'n/a' : fmtFactor(v)}`;
        return `${item.dataset.label}: ${fmtFactor(v)}${x?.fullyUnrolled(line) ? ' (fully unrolled, no loop left)' : ''}`;
      },
    ) as ChartConfiguration['options'],
  };
}

/** A y axis of ratios from 0 (speedup, slowdown): 2 decimals and ×, a little headroom over the largest bar or whisker. */
function ratioAxis(base: BaseOptions, t: Theme, top: number, title: string) {
  return {
    beginAtZero: true,
    suggestedMax: top * 1.08,
    ticks: { ...base.tick, callback: (v: string | number) => `${Number(v).toFixed(2)}×` },
    grid: { color: t.grid },
    border: { color: t.border },
    title: base.title(title),
  };
}

/**
 * Executed warp instructions per launch (ncu smsp__inst_executed.sum) as bars, each row's median
 * time as a line on a second axis (issue 26). One chart rather than a chart beside the speedup
 * chart: heights in two charts can't be compared by eye, and the point is the comparison ("executed
 * instructions fall 12× while the time falls 3.5×"). Both axes start at 0 and top out at 1.1 × their
 * own largest value, so the tallest bar and the line's highest point stand at the same height and
 * every other bar and point at its fraction of them: where the bars fall below the line, the
 * kernel does less work without getting faster in proportion (memory or latency bound by then).
 * The median is a line and not a second bar: it stays readable over bars of any height.
 */
export function executedChart(k: ChartKit): ChartConfiguration {
  const { m, t, labels, base } = k;
  const executed = m.variants.map(x => (x.ok ? x.num('executedInstructions') : null));
  const medianUs = m.variants.map(x => {
    const ms = x.ok ? x.num('medianMs') : null;
    return ms === null ? null : ms * 1000;
  });
  const barFill = m.variants.map(x => (x.ref ? faded(t.purple, 0.45) : t.purple));
  const datasets = [
    {
      label: 'Executed warp instructions per launch',
      data: executed,
      backgroundColor: barFill,
      ...k.outline(),
      yAxisID: 'y',
      barPercentage: 0.8,
      order: 2,
    },
    {
      type: 'line' as const,
      label: 'Median time (µs)',
      data: medianUs,
      borderColor: t.foreground,
      backgroundColor: t.foreground,
      borderWidth: 2,
      pointRadius: 4,
      pointHoverRadius: 6,
      spanGaps: false,
      yAxisID: 'yt',
      order: 1,
      clip: false as const, // the highest point sits near the top edge: draw it whole
    },
  ] as ChartDataset<'bar'>[];
  const legend: LegendEntry[] = [
    { text: 'Executed warp instructions / launch', fill: t.purple, datasetIndex: 0 },
    { text: 'Median time (µs, right axis)', fill: 'transparent', stroke: t.foreground, lineWidth: 2, datasetIndex: 1 },
    ...(m.variants.some(x => x.ref) ? [{ text: 'Identical code (= ×N), measured once', fill: faded(t.purple, 0.45) }] : []),
  ];
  const baseRow = m.baseline;
  const vsBaseline = (v: number | null, b: number | null) =>
    v === null || b === null || baseRow === null ? '' : ` (${fmtRatio(v, b)} vs ${baseRow.v.label})`;
  return {
    type: 'bar',
    data: { labels, datasets },
    options: k.decorate(
      { refLines: [], legend, whiskers: null },
      {
        y: zeroAxis(base, t, executed, 'Executed warp instructions', fmtCompact, true),
        yt: zeroAxis(base, t, medianUs, 'Median time (µs)', v => `${Number(v.toPrecision(6))}`, false),
      },
      item => {
        const x = m.variants[item.dataIndex];
        if (!x) return '';
        if (item.datasetIndex === 0) {
          const v = x.num('executedInstructions');
          return `executed ${fmtInt(v)} warp instructions${vsBaseline(v, baseRow?.num('executedInstructions') ?? null)}`;
        }
        const ms = x.num('medianMs');
        return `median ${fmtUs(ms)} µs${vsBaseline(ms, baseRow?.num('medianMs') ?? null)}`;
      },
    ) as ChartConfiguration['options'],
  };
}

/**
 * A linear axis from 0 to 1.1 × the largest value (two such axes put their largest values at one
 * height), ticks at round steps below the top. `grid`: draw the grid (one axis of two does).
 */
function zeroAxis(base: BaseOptions, t: Theme, values: (number | null)[], title: string, fmt: (v: number) => string, grid: boolean) {
  const top = Math.max(0, ...values.filter((v): v is number => v !== null && Number.isFinite(v)));
  const max = top > 0 ? top * 1.1 : 1;
  const magnitude = 10 ** Math.floor(Math.log10(max / 5));
  const step = [1, 2, 5, 10].map(s => s * magnitude).find(s => max / s <= 6) ?? 10 * magnitude;
  return {
    position: grid ? 'left' : 'right',
    min: 0,
    max,
    afterBuildTicks: (scale: Scale) => {
      const ticks = [];
      for (let i = 0; i * step <= max * (1 + 1e-9); i++) ticks.push({ value: i * step });
      scale.ticks = ticks;
    },
    ticks: { ...base.tick, callback: (v: string | number) => fmt(Number(v)) },
    grid: grid ? { color: t.grid } : { display: false },
    border: { color: t.border },
    title: base.title(title),
  };
}
