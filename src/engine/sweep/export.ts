// Exports of a SweepResult: CSV for spreadsheets and JSON in the T4 autotuning results
// schema (schema_version 1.0.0, the format Kernel Tuner and other tuners read and write).
import type { FactorValue, SweepResult, SweepVariant } from '../../schema/types';
import { gpuScore, staticRuleOf, staticScore } from './objective';
import { AS_WRITTEN_ID } from './space';
import { comparisonAsVariants, isComparison } from '../../schema/comparison';

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180: comma separated, CRLF line ends, fields with a quote, comma or line break
// quoted, quotes doubled)

/** A text cell a spreadsheet would run as a formula gets a leading apostrophe; numbers stay numbers. */
function neutralise(text: string): string {
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return text;
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? neutralise(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function stallReasons(r: SweepResult): string[] {
  const all = new Set<string>();
  for (const v of r.variants) for (const k of Object.keys(v.stallShare ?? {})) all.add(k);
  return [...all].sort();
}

const ICACHE_COLUMNS = [
  'icache shown',
  'icache measured slowdown',
  'icache noInstruction',
  'icache predicted low',
  'icache predicted high',
  'icache bytes',
  'icache warpsPerSm',
  'icache reference',
  'icache cause',
  'icache why',
];

/**
 * One row per variant: ids, a column per loop factor and per parameter, then the measurements. A
 * kernel comparison has one row per compared kernel (id: its mangled name; speedup: against the
 * baseline kernel).
 */
export function sweepCsv(r: SweepResult): string {
  return variantsCsv(comparisonAsVariants(r));
}

function variantsCsv(r: SweepResult): string {
  const lines = r.loops.map(l => String(l.line));
  const params = Object.keys(r.params);
  const stalls = stallReasons(r);
  // i-cache columns (issue 13) only when some variant has an entry: older results export as before.
  const icache = r.variants.some(v => v.icache);
  const header = [
    'id',
    'label',
    'status',
    ...lines.map(l => `L${l}`),
    ...params,
    'kernelInstructions',
    'kernelBytes',
    ...lines.map(l => `loopInstructions L${l}`),
    ...lines.map(l => `effectiveUnroll L${l}`),
    ...lines.map(l => `fullyUnrolled L${l}`),
    'registers',
    'spillStores',
    'spillLoads',
    'occupancy',
    'identicalTo',
    'compileMs',
    'samples',
    'medianMs',
    'q1Ms',
    'q3Ms',
    'iqrMs',
    'cv',
    'speedup',
    'withinNoise',
    'achievedOccupancy',
    ...stalls.map(s => `stall ${s}`),
    ...(icache ? ICACHE_COLUMNS : []),
    'best',
    'message',
    // Last, so that spreadsheets reading the columns before it by position keep working.
    'instantiation',
    'executedInstructions',
  ];
  const rows = r.variants.map(v => [
    v.id,
    v.label,
    v.status,
    ...lines.map(l => (v.factors[l] === undefined ? (v.id === AS_WRITTEN_ID ? 'as-written' : null) : v.factors[l])),
    ...params.map(p => v.params[p] ?? null),
    v.kernelInstructions,
    v.kernelBytes,
    ...lines.map(l => v.loopInstructions[l] ?? null),
    ...lines.map(l => v.effectiveUnroll[l] ?? null),
    ...lines.map(l => v.fullyUnrolled[l] ?? null),
    v.registers,
    v.spillStores,
    v.spillLoads,
    v.occupancy,
    v.identicalTo,
    v.compileMs,
    v.samples,
    v.medianMs,
    v.q1Ms,
    v.q3Ms,
    v.iqrMs,
    v.cv,
    v.speedup,
    v.withinNoise,
    v.achievedOccupancy,
    ...stalls.map(s => v.stallShare?.[s] ?? null),
    ...(icache
      ? [
          v.icache?.shown ?? null,
          v.icache?.measured?.slowdown ?? null,
          v.icache?.measured?.noInstruction ?? null,
          v.icache?.predicted?.low ?? null,
          v.icache?.predicted?.high ?? null,
          v.icache?.bytes ?? null,
          v.icache?.warpsPerSm ?? null,
          v.icache?.reference ?? null,
          v.icache?.measured?.attribution?.cause ?? null,
          v.icache?.measured?.attribution?.why ?? null,
        ]
      : []),
    v.id === r.best,
    v.message,
    v.instantiation ?? null,
    v.executedInstructions ?? null,
  ]);
  return [header, ...rows].map(row => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}

// ---------------------------------------------------------------------------------------------
// T4 (https://github.com/odgaard/TuningSchema, results-schema.json 1.0.0). Mapping:
//   configuration      loop factors as `unroll_L<line>` ("default", "full" or the integer) and
//                      each parameter under its macro name (a number when it reads as one); the
//                      file as written carries each loop's written factor and null parameters.
//   times              compilation_time: nvcc wall time of the variant, ms (a cache hit reports
//                      its original compile; 0 when unknown); runtimes: the median kernel time, ms (a
//                      SweepResult keeps summary statistics, not every sample), [] when static.
//   invalidity         ok → "correct"; compile, timeout, runtime, correctness as themselves; an
//                      ncu failure (profile) → "runtime".
//   correctness        1 when the variant is valid (its checksums matched the file as written's
//                      on a GPU; statically: it compiled), else 0.
//   measurements       time (median ms), q1/q3/iqr/cv, samples, speedup, stall shares, achieved
//                      occupancy, kernel instructions/bytes, registers, spills, theoretical
//                      occupancy, per-loop instructions and effective unroll.
//   objectives         ["time"] on a GPU; statically ["static_rank"]: the variant's rank under
//                      the static rule (1 = best), itself a measurement.
// Variants that never finished (cancelled, pending) are not results and are left out.

export const T4_SCHEMA_VERSION = '1.0.0';

type T4Invalidity = 'timeout' | 'compile' | 'runtime' | 'correctness' | 'constraints' | 'correct';

interface T4Measurement {
  name: string;
  value: number | string | unknown[];
  unit: string;
}

interface T4Result {
  timestamp: string;
  configuration: Record<string, FactorValue | string | number | null>;
  times: { compilation_time: number; runtimes: number[]; framework?: number; search_algorithm?: number; validation?: number };
  invalidity: T4Invalidity;
  correctness: number;
  measurements: T4Measurement[];
  objectives: string[];
}

export interface T4Document {
  schema_version: string;
  results: T4Result[];
}

function invalidity(status: SweepVariant['status']): T4Invalidity | null {
  switch (status) {
    case 'ok':
      return 'correct';
    case 'compile':
    case 'timeout':
    case 'runtime':
    case 'correctness':
      return status;
    case 'profile':
      return 'runtime';
    default:
      return null;
  }
}

function paramValue(v: string): string | number {
  return /^[-+]?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
}

export function sweepT4(result: SweepResult): T4Document {
  // a kernel comparison: one result per compared kernel, its configuration the kernel's name
  const r = comparisonAsVariants(result);
  const base = r.variants.find(v => v.id === r.baseline) ?? null;
  const score = (v: SweepVariant) => (r.static ? staticScore(v, base, staticRuleOf(r), r.variants) : gpuScore(v));
  const ranked = r.variants
    .map(v => ({ v, s: score(v) }))
    .filter((x): x is { v: SweepVariant; s: number } => x.s !== null)
    .sort((a, b) => a.s - b.s);
  const rank = new Map(ranked.map((x, i) => [x.v.id, i + 1]));
  const results: T4Result[] = [];
  for (const v of r.variants) {
    const inv = invalidity(v.status);
    if (!inv) continue;
    const configuration: T4Result['configuration'] = {};
    for (const l of r.loops) configuration[`unroll_L${l.line}`] = v.factors[String(l.line)] ?? (v.id === AS_WRITTEN_ID ? l.written : null);
    for (const p of Object.keys(r.params)) configuration[p] = v.params[p] !== undefined ? paramValue(v.params[p]) : null;
    if (isComparison(r)) configuration.kernel = v.label;
    const m: T4Measurement[] = [];
    const add = (name: string, value: number | string | null | undefined, unit = '') => {
      if (value !== null && value !== undefined) m.push({ name, value, unit });
    };
    add('time', v.medianMs, 'ms');
    add('time_q1', v.q1Ms, 'ms');
    add('time_q3', v.q3Ms, 'ms');
    add('time_iqr', v.iqrMs, 'ms');
    add('time_cv', v.cv);
    if (v.samples) add('samples', v.samples);
    add('speedup', v.speedup);
    for (const [reason, share] of Object.entries(v.stallShare ?? {})) add(`stall_${reason}`, share);
    add('achieved_occupancy', v.achievedOccupancy, '%');
    add('kernel_instructions', v.kernelInstructions);
    add('kernel_bytes', v.kernelBytes, 'B');
    add('registers', v.registers);
    add('spill_stores', v.spillStores, 'B');
    add('spill_loads', v.spillLoads, 'B');
    add('theoretical_occupancy', v.occupancy);
    add('executed_instructions', v.executedInstructions);
    for (const l of r.loops) {
      add(`loop_instructions_L${l.line}`, v.loopInstructions[String(l.line)]);
      add(`effective_unroll_L${l.line}`, v.effectiveUnroll[String(l.line)]);
    }
    if (r.static) add('static_rank', rank.get(v.id));
    if (v.identicalTo) add('identical_to', v.identicalTo);
    add('instantiation', v.instantiation);
    add('variant', v.id);
    results.push({
      timestamp: r.createdAt,
      configuration,
      times: { compilation_time: v.compileMs ?? 0, runtimes: v.medianMs !== null ? [v.medianMs] : [] },
      invalidity: inv,
      correctness: inv === 'correct' ? 1 : 0,
      measurements: m,
      objectives: r.static ? ['static_rank'] : ['time'],
    });
  }
  return { schema_version: T4_SCHEMA_VERSION, results };
}
