// The variants table's columns: what each one shows, how it sorts, and which need a GPU run.
import { fmtFactor, fmtInt, fmtPercent, fmtRange, fmtShare, fmtSpeedup, fmtUs, NONE } from './format';
import { stallLabel } from './model';
import type { VariantView, ViewModel } from './model';
import { instantiationLabel } from '../../src/schema/kernelNames';

export interface Column {
  id: string;
  title: string;
  tip: string;
  numeric: boolean;
  /** Measured on the GPU: left out of static results, where it is always empty. */
  gpu: boolean;
  sortValue(x: VariantView): number | string | null;
  text(x: VariantView): string;
}

const FACTOR_ORDER = { default: 0, full: Number.MAX_SAFE_INTEGER } as const;

function numCol(
  id: string,
  title: string,
  tip: string,
  gpu: boolean,
  value: (x: VariantView) => number | null,
  text: (n: number | null) => string,
): Column {
  return { id, title, tip, numeric: true, gpu, sortValue: value, text: x => text(value(x)) };
}

/** What a comparison's rows (kernels the compiler built as they are) never have: theoretical occupancy is not read for them, nothing is identical code. */
const NOT_IN_A_COMPARISON = new Set(['kernelBytes', 'occupancy', 'identicalTo']);

export function columns(m: ViewModel): Column[] {
  const cols: Column[] = [...variantColumns(m), ...codeColumns(m), ...timingColumns(m)];
  if (m.icache) cols.push(icacheColumn(m));
  cols.push(...stallColumns(m), ...remarkColumns());
  const shown = m.comparison ? cols.filter(c => !NOT_IN_A_COMPARISON.has(c.id)) : cols;
  return m.gpu ? shown : shown.filter(c => !c.gpu);
}

/** Which variant a row is: its label, each loop's factor, parameters, instantiation and status. */
function variantColumns(m: ViewModel): Column[] {
  const r = m.result;
  const cols: Column[] = [
    m.comparison
      ? {
          id: 'label',
          title: 'Kernel',
          tip: 'The kernel as the source names it, with its template arguments',
          numeric: false,
          gpu: false,
          sortValue: x => x.index,
          text: x => x.v.label,
        }
      : {
          id: 'label',
          title: 'Variant',
          tip: 'Variant label',
          numeric: false,
          gpu: false,
          sortValue: x => x.v.label,
          text: x => x.v.label,
        },
  ];
  for (const line of m.loopLines) {
    const written = r.loops.find(l => String(l.line) === line)?.written ?? null;
    const factor = (x: VariantView) => (line in x.v.factors ? x.v.factors[line] : Object.keys(x.v.factors).length ? null : written);
    cols.push({
      id: `factor:${line}`,
      title: `L${line} factor`,
      tip: `Unroll factor of the loop at line ${line} (the file as written keeps its own)`,
      numeric: false,
      gpu: false,
      sortValue: x => {
        const f = factor(x);
        return f === null ? null : typeof f === 'number' ? f : FACTOR_ORDER[f];
      },
      text: x => {
        const f = factor(x);
        return line in x.v.factors || f === null ? fmtFactor(f) : `${fmtFactor(f)} (written)`;
      },
    });
  }
  for (const key of m.paramKeys) {
    cols.push({
      id: `param:${key}`,
      title: key,
      tip: `Parameter ${key}`,
      numeric: false,
      gpu: false,
      sortValue: x => {
        const v = x.v.params[key];
        return v === undefined ? null : Number.isFinite(Number(v)) ? Number(v) : v;
      },
      text: x => x.v.params[key] ?? NONE,
    });
  }
  if (m.instantiations)
    cols.push({
      id: 'instantiation',
      title: 'Instantiation',
      tip: 'The template instantiation this row measured (the function holding the loops; the same for every row unless a template parameter is swept)',
      numeric: false,
      gpu: false,
      sortValue: x => (x.v.instantiation ? instantiationLabel(x.v.instantiation) : null),
      text: x => (x.v.instantiation ? instantiationLabel(x.v.instantiation) : NONE),
    });
  cols.push({
    id: 'status',
    title: 'Status',
    tip: 'ok, pending, or why the variant failed',
    numeric: false,
    gpu: false,
    sortValue: x => x.v.status,
    text: x => x.v.status,
  });
  return cols;
}

/** What the compiler made of a variant: SASS size of the kernel and each loop, nvcc's unroll, registers, spills, occupancy. */
function codeColumns(m: ViewModel): Column[] {
  const cols: Column[] = [
    numCol('kernelInstructions', 'Kernel instr', 'SASS instructions of the kernel', false, x => x.num('kernelInstructions'), fmtInt),
    numCol('kernelBytes', 'Kernel bytes', 'SASS bytes of the kernel', false, x => x.num('kernelBytes'), fmtInt),
  ];
  for (const line of m.loopLines) {
    cols.push(
      numCol(
        `loopInstructions:${line}`,
        `L${line} loop instr`,
        `SASS instructions attributed to the loop at line ${line}`,
        false,
        x => x.loopInstructions(line),
        fmtInt,
      ),
      numCol(
        `loopBytes:${line}`,
        `L${line} loop bytes`,
        'Loop SASS bytes (instructions × 16), compared with the i-cache budget',
        false,
        x => x.loopBytes(line),
        fmtInt,
      ),
      {
        id: `effectiveUnroll:${line}`,
        title: `L${line} nvcc unroll`,
        tip: 'Copies of one iteration in the hot machine-code loop (effective unroll)',
        numeric: true,
        gpu: false,
        sortValue: x => x.effectiveUnroll(line),
        text: x => {
          const n = x.effectiveUnroll(line);
          return n === null ? NONE : `${fmtFactor(n)}${x.fullyUnrolled(line) ? ' (full)' : ''}`;
        },
      },
    );
  }
  cols.push(
    numCol('registers', 'Registers', 'Registers per thread', false, x => x.num('registers'), fmtInt),
    numCol('spillStores', 'Spill st (B)', 'Bytes of register spill stores', false, x => x.num('spillStores'), fmtInt),
    numCol('spillLoads', 'Spill ld (B)', 'Bytes of register spill loads', false, x => x.num('spillLoads'), fmtInt),
    numCol(
      'occupancy',
      'Theor. occ.',
      'Theoretical occupancy',
      false,
      x => x.num('occupancy'),
      v => fmtShare(v),
    ),
  );
  return cols;
}

/** What a GPU run measured: achieved occupancy, the durations' quartiles and spread, the speedup and its noise check. */
function timingColumns(m: ViewModel): Column[] {
  // executed instructions: only ncu counts them (a result timed by the CUPTI timer has none)
  const executed = m.executed
    ? [
        numCol(
          'executedInstructions',
          'Exec instr',
          'Warp instructions executed by one launch (ncu smsp__inst_executed.sum)',
          true,
          x => x.num('executedInstructions'),
          fmtInt,
        ),
      ]
    : [];
  return [
    ...executed,
    numCol(
      'achievedOccupancy',
      'Achieved occ.',
      'Achieved occupancy, % of peak warps (ncu)',
      true,
      x => x.num('achievedOccupancy'),
      fmtPercent,
    ),
    numCol('samples', 'Samples', 'Kernel launches timed', true, x => (x.ok ? x.num('samples') : null), fmtInt),
    numCol('medianMs', 'Median (µs)', 'Median kernel duration', true, x => x.num('medianMs'), fmtUs),
    numCol('q1Ms', 'Q1 (µs)', 'First quartile of the durations', true, x => x.num('q1Ms'), fmtUs),
    numCol('q3Ms', 'Q3 (µs)', 'Third quartile of the durations', true, x => x.num('q3Ms'), fmtUs),
    numCol('iqrMs', 'IQR (µs)', 'Interquartile range of the durations', true, x => x.num('iqrMs'), fmtUs),
    numCol(
      'cv',
      'CV',
      'Coefficient of variation of the durations',
      true,
      x => x.num('cv'),
      v => fmtShare(v, 2),
    ),
    numCol(
      'speedup',
      'Speedup',
      m.comparison ? "The baseline kernel's median / this kernel's median" : 'Baseline median / this median',
      true,
      x => x.num('speedup'),
      fmtSpeedup,
    ),
    {
      id: 'speedupIqr',
      title: 'Speedup IQR',
      tip: "Baseline median / this variant's q3 … q1 (the chart's whiskers)",
      numeric: true,
      gpu: true,
      sortValue: x => x.speedupLow,
      text: x => (x.speedupLow === null || x.speedupHigh === null ? NONE : `${x.speedupLow.toFixed(3)}–${x.speedupHigh.toFixed(3)}×`),
    },
    {
      id: 'withinNoise',
      title: 'Within noise',
      tip: 'The interquartile ranges of this variant and the baseline overlap',
      numeric: false,
      gpu: true,
      sortValue: x => (x.withinNoise === null ? null : x.withinNoise ? 'yes' : 'no'),
      text: x => (x.withinNoise === null ? NONE : x.withinNoise ? 'yes' : 'no'),
    },
  ];
}

/** The share of each stall group (as the stalls chart stacks them), then the largest reason. */
function stallColumns(m: ViewModel): Column[] {
  const cols: Column[] = [];
  m.stallGroups.forEach((g, i) => {
    cols.push(
      numCol(
        `stall:${g}`,
        stallLabel(g),
        `Share of warp stalls: ${stallLabel(g)}`,
        true,
        x => x.stallGroups[i],
        v => fmtShare(v),
      ),
    );
  });
  cols.push({
    id: 'topStall',
    title: 'Top stall',
    tip: 'The largest warp-stall reason',
    numeric: false,
    gpu: true,
    sortValue: x => x.topStall?.reason ?? null,
    text: x => (x.topStall ? `${x.topStall.reason} (${fmtShare(x.topStall.share)})` : NONE),
  });
  return cols;
}

/** Last: which variant has the same machine code, and why a variant failed. */
function remarkColumns(): Column[] {
  return [
    {
      id: 'identicalTo',
      title: 'Identical to',
      tip: 'Same machine code as this variant: measured once',
      numeric: false,
      gpu: false,
      sortValue: x => x.ref?.label ?? x.v.identicalTo,
      text: x => x.ref?.label ?? x.v.identicalTo ?? NONE,
    },
    {
      id: 'message',
      title: 'Message',
      tip: 'Why the variant failed, or a remark',
      numeric: false,
      gpu: false,
      sortValue: x => x.v.message,
      text: x => x.v.message ?? '',
    },
  ];
}

/** The value an i-cache cell leads with: the measured slowdown, else the middle of the predicted range. */
function icacheValue(x: VariantView): number | null {
  const c = x.icache;
  if (!c) return null;
  if (c.shown === 'measured' && c.measured) return c.measured.slowdown;
  // Measured slower, but not for the i-cache (issue 22): no i-cache slowdown to rank it by.
  if (c.shown === 'not-icache') return 1;
  return c.predicted ? (c.predicted.low + c.predicted.high) / 2 : null;
}

/** "1.75× measured (predicted 1.48–2.39×)" / "1.48–2.39× predicted": the cell's text, badges aside. */
function icacheText(x: VariantView): string {
  const c = x.icache;
  if (!c) return NONE;
  if (c.shown === 'measured' && c.measured) {
    return `${c.measured.slowdown.toFixed(2)}× measured${c.predicted ? ` (predicted ${fmtRange(c.predicted)})` : ''}`;
  }
  if (c.shown === 'not-icache' && c.measured) return `${c.measured.slowdown.toFixed(2)}× not i-cache`;
  return c.predicted ? `${fmtRange(c.predicted)} predicted` : NONE;
}

function icacheColumn(m: ViewModel): Column {
  const against = m.icacheReference ? ` than ${m.icacheReference}` : ' than the same loop at a size that fits';
  return {
    id: 'icache',
    title: 'I-cache slowdown',
    tip:
      `How much slower${against} for not fitting the instruction cache: measured on the GPU when the variant ran, else predicted from its SASS. ` +
      '"not i-cache": measured slower, but its hot loop fits or its no_instruction stalls did not rise (under 10 % of stalls, or under 5 points above the reference)',
    numeric: true,
    gpu: false,
    sortValue: icacheValue,
    text: icacheText,
  };
}
