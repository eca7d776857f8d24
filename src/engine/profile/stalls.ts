// Warp stall reasons from ncu's metrics and source page, per kernel launch and per source line.
//
// Which metrics (names as ncu 2025.3.1 lists them, test/fixtures/ncu/query-metrics-stall.txt and
// the raw-page fixtures), in order of preference, one family per breakdown:
//   warp-state     smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio: warps
//                  resident in that state per issue cycle; their sum (selected included) is
//                  ncu's "Warp Cycles Per Issued Instruction", and its WarpStateStats rule quotes
//                  each reason's part of that average.
//   latency        smsp__average_warp_latency_issue_stalled_<reason> (same shares)
//   per-warp       smsp__warp_issue_stalled_<reason>_per_warp_active (.pct / .ratio)
//   counters       smsp__warps_issue_stalled_<reason> (.sum preferred)
//   pc-sampling    smsp__pcsamp_warps_issue_stalled_<reason> and <reason>_not_issued: sample
//                  counts (the older scheme; ncu spells no_instruction "no_instructions" there).
// Reasons are keyed by ncu's metric names (barrier, branch_resolving, dispatch_stall, drain, gmma,
// imc_miss, lg_throttle, long_scoreboard, math_pipe_throttle, membar, mio_throttle, misc,
// no_instruction, not_selected, selected, short_scoreboard, sleeping, tex_throttle, wait, and
// whatever a newer ncu adds). Source-page short names (stall_no_inst, stall_long_sb, …) map to
// the same keys (canonicalStallReason in ncuCsv.ts).
//
// stallShare is each reason's fraction of the sum over all reasons, `selected` included, so the
// shares are the parts of the average cycles between two issued instructions. The "not issued"
// variants are reported apart and are not part of that sum.
import {
  canonicalStallReason,
  detailsMetrics,
  DetailsKernel,
  Dim3,
  parseNumber,
  RawKernelRow,
  RawMetric,
  SourcePage,
  SourceRow,
  toNanoseconds,
} from './ncuCsv';
import { RANGES, rangeProblem } from '../../schema/ranges';

type StallSource = 'warp-state' | 'latency' | 'per-warp' | 'counters' | 'pc-sampling' | 'none';

export interface StallBreakdown {
  /** Reason → value as ncu reports it (ratio per issue cycle, or samples for pc-sampling). */
  stalls: Record<string, number>;
  /** Reason → fraction of the sum of `stalls` (0 for every reason when the sum is 0). */
  stallShare: Record<string, number>;
  /** The `_not_issued` variants, when the metrics have them. */
  notIssued?: Record<string, number>;
  /** Which metric family the numbers came from. */
  source: StallSource;
}

/** Metric values by name: a raw-page row's metrics, a plain name → number map, or a Map. */
export type MetricsInput =
  | Record<string, RawMetric | number | string | null | undefined>
  | Map<string, RawMetric | number | string | null | undefined>
  | RawKernelRow
  | DetailsKernel;

interface Family {
  source: Exclude<StallSource, 'none'>;
  re: RegExp;
}

// <reason> is matched lazily so that a "_per_issue_active"-style tail is not swallowed into it.
const FAMILIES: Family[] = [
  { source: 'warp-state', re: /^smsp__average_warps_issue_stalled_([a-z0-9_]+?)_per_issue_active(?:\.([a-z_.]+))?$/ },
  { source: 'latency', re: /^smsp__average_warp_latency_issue_stalled_([a-z0-9_]+?)(?:\.([a-z_.]+))?$/ },
  { source: 'per-warp', re: /^smsp__warp_issue_stalled_([a-z0-9_]+?)_per_warp_active(?:\.([a-z_.]+))?$/ },
  { source: 'counters', re: /^smsp__warps_issue_stalled_([a-z0-9_]+?)(?:\.([a-z_.]+))?$/ },
  { source: 'pc-sampling', re: /^smsp__pcsamp_warps_issue_stalled_([a-z0-9_]+?)(?:\.([a-z_.]+))?$/ },
];

/** Preferred roll-ups when one reason appears with several suffixes. */
const SUFFIX_RANK = ['ratio', 'pct', 'sum', '', 'avg', 'max', 'min'];
const suffixRank = (s: string) => {
  const i = SUFFIX_RANK.indexOf(s);
  return i < 0 ? SUFFIX_RANK.length : i;
};

/** Metric names kernelProfile reads besides the stall families. */
const PROFILE_METRIC_NAMES = new Set([
  'gpu__time_duration.sum',
  'gpu__time_duration.avg',
  'gpu__time_duration',
  'smsp__inst_executed.sum',
  'sm__inst_executed.sum',
  'inst_executed',
  'smsp__inst_executed',
  'sm__inst_executed',
  'sm__warps_active.avg.pct_of_peak_sustained_active',
  'launch__registers_per_thread',
  'smsp__thread_inst_executed.sum',
]);

/**
 * Whether kernelProfile reads the metric `name`: a row holding only these metrics gives the same
 * profile as the whole row (the streaming reader keeps only them).
 */
export function isProfileMetric(name: string): boolean {
  return PROFILE_METRIC_NAMES.has(name) || FAMILIES.some(f => f.re.test(name));
}

/** Stall reasons of one kernel launch, from whichever stall metrics it has (see the header). */
export function stallBreakdown(metrics: MetricsInput | null | undefined): StallBreakdown {
  const values = metricValues(metrics);
  for (const fam of FAMILIES) {
    const picked = new Map<string, { rank: number; value: number; notIssued: boolean; reason: string }>();
    for (const [name, value] of values) {
      const m = fam.re.exec(name);
      if (!m || value === null) continue;
      const { reason, notIssued } = canonicalStallReason(m[1]);
      const key = `${notIssued ? '1' : '0'}:${reason}`;
      const rank = suffixRank(m[2] ?? '');
      const prev = picked.get(key);
      if (!prev || rank < prev.rank) picked.set(key, { rank, value, notIssued, reason });
    }
    if (![...picked.values()].some(p => !p.notIssued)) continue;
    const stalls: Record<string, number> = {};
    const notIssued: Record<string, number> = {};
    for (const p of [...picked.values()].sort((a, b) => (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0))) {
      (p.notIssued ? notIssued : stalls)[p.reason] = p.value;
    }
    return { stalls, stallShare: shares(stalls), ...(Object.keys(notIssued).length ? { notIssued } : {}), source: fam.source };
  }
  return { stalls: {}, stallShare: {}, source: 'none' };
}

/** Each value's fraction of their sum (0 everywhere when the sum is 0 or negative). */
export function shares(values: Record<string, number>): Record<string, number> {
  const total = Object.values(values).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(values)) out[k] = total > 0 && Number.isFinite(v) ? v / total : 0;
  return out;
}

export interface KernelProfile {
  /** Kernel name as ncu printed it. */
  name: string;
  /** ncu's result ID, when the page had one. */
  id: number | null;
  /** gpu__time_duration.sum (else .avg), in nanoseconds. */
  durationNs: number | null;
  stalls: Record<string, number>;
  stallShare: Record<string, number>;
  notIssued?: Record<string, number>;
  stallSource: StallSource;
  /** smsp__inst_executed.sum (warp instructions), else sm__inst_executed.sum, else inst_executed. */
  executedInstructions: number | null;
  /** sm__warps_active.avg.pct_of_peak_sustained_active, in percent (0–100). */
  achievedOccupancy: number | null;
  /**
   * smsp__thread_inst_executed.sum over the threads the launch ran (grid × block, from the same
   * row): instructions one thread executed on average; null without either.
   */
  instructionsPerThread?: number | null;
  /** smsp__thread_inst_executed.sum: instructions all threads of the launch executed; null when not measured. */
  threadInstructions?: number | null;
  /** launch__registers_per_thread. */
  registers: number | null;
  blockSize: Dim3 | null;
  gridSize: Dim3 | null;
}

/** A duration metric in ns; null when absent, not a time, or impossible (the readers reject such rows with a message first). */
function possibleDurationNs(m: RawMetric | null): number | null {
  const ns = m ? toNanoseconds(m.value, m.unit) : null;
  return ns !== null && !rangeProblem(RANGES.durationNs, ns) ? ns : null;
}

/** The numbers Unroll Lens shows for one profiled launch (raw-page row or details-page kernel). */
export function kernelProfile(row: RawKernelRow | DetailsKernel): KernelProfile {
  const isDetails = !!row && Array.isArray((row as DetailsKernel).sections);
  const metrics: Record<string, RawMetric> = isDetails
    ? detailsMetrics(row as DetailsKernel)
    : ((row as RawKernelRow | undefined)?.metrics ?? {});
  const metric = (...names: string[]): RawMetric | null => {
    for (const n of names) {
      const m = Object.prototype.hasOwnProperty.call(metrics, n) ? metrics[n] : undefined;
      if (m && m.value !== null) return m;
    }
    return null;
  };
  const value = (...names: string[]) => metric(...names)?.value ?? null;
  const dur = metric('gpu__time_duration.sum', 'gpu__time_duration.avg', 'gpu__time_duration');
  const b = stallBreakdown(metrics);
  return {
    name: row?.kernelName ?? '',
    id: row?.id ?? null,
    durationNs: possibleDurationNs(dur),
    stalls: b.stalls,
    stallShare: b.stallShare,
    ...(b.notIssued ? { notIssued: b.notIssued } : {}),
    stallSource: b.source,
    executedInstructions: value(
      'smsp__inst_executed.sum',
      'sm__inst_executed.sum',
      'inst_executed',
      'smsp__inst_executed',
      'sm__inst_executed',
    ),
    achievedOccupancy: value('sm__warps_active.avg.pct_of_peak_sustained_active'),
    instructionsPerThread: perThread(value('smsp__thread_inst_executed.sum'), row?.gridSize ?? null, row?.blockSize ?? null),
    threadInstructions: value('smsp__thread_inst_executed.sum'),
    registers: value('launch__registers_per_thread'),
    blockSize: row?.blockSize ?? null,
    gridSize: row?.gridSize ?? null,
  };
}

/** Thread instructions over the launch's threads (grid × block); null when any is missing or no thread ran. */
function perThread(threadInstructions: number | null, grid: Dim3 | null, block: Dim3 | null): number | null {
  const threads = grid && block ? grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2] : 0;
  return threadInstructions !== null && threads > 0 ? threadInstructions / threads : null;
}

export interface StallsJson {
  kernels: { name: string; durationNs: number | null; stalls: Record<string, number>; stallShare: Record<string, number> }[];
}

/**
 * The documented stalls contract:
 * `{"kernels":[{"name":"…","durationNs":1250000,"stalls":{…},"stallShare":{…}}]}`, one entry
 * per profiled launch in ncu's order.
 */
export function stallsJson(rows: ReadonlyArray<RawKernelRow | DetailsKernel | KernelProfile>): StallsJson {
  return {
    kernels: (rows ?? []).map(r => {
      const p = isProfile(r) ? r : kernelProfile(r);
      return { name: p.name, durationNs: p.durationNs, stalls: p.stalls, stallShare: p.stallShare };
    }),
  };
}

export interface LineStalls {
  /** The file as the source page names it. */
  file: string;
  /** 1-based. */
  line: number;
  /** The source line's text as ncu printed it. */
  source: string;
  samples: number;
  samplesNotIssued: number;
  instructionsExecuted: number | null;
  /** Samples per reason. */
  stalls: Record<string, number>;
  stallsNotIssued: Record<string, number>;
  /** Each reason's fraction of this line's stall samples. */
  stallShare: Record<string, number>;
  /** Kernels (functions) whose code on this line was sampled, as the page names them. */
  kernels: string[];
}

/**
 * Per source line of `file`: warp-stall samples, per reason, summed over every function of the
 * page with code on that line (all files when `file` is omitted). Needs a cuda or cuda,sass
 * source page; a sass-only page has no line numbers and gives []. `file` matches the page's
 * "File Path" exactly, else by path suffix ("kernels/bloat.cu" ~ "/home/dev/kernels/bloat.cu"),
 * else by file name. Sorted by file, then line.
 */
export function perLineStalls(page: SourcePage, file?: string): LineStalls[] {
  const fns = (page?.functions ?? []).filter(f => f.view !== 'sass' && f.file !== undefined);
  const wanted = file === undefined ? fns : matchFile(fns, file);
  const byLine = new Map<string, LineStalls>();
  for (const f of wanted) {
    for (const r of f.rows) {
      if (r.line === undefined) continue;
      const key = `${f.file}\u0000${r.line}`;
      let e = byLine.get(key);
      if (!e) {
        e = {
          file: f.file ?? '',
          line: r.line,
          source: r.source,
          samples: 0,
          samplesNotIssued: 0,
          instructionsExecuted: null,
          stalls: {},
          stallsNotIssued: {},
          stallShare: {},
          kernels: [],
        };
        byLine.set(key, e);
      }
      addRow(e, r);
      if ((r.samples > 0 || (r.instructionsExecuted ?? 0) > 0) && !e.kernels.includes(f.kernelName)) e.kernels.push(f.kernelName);
    }
  }
  const out = [...byLine.values()];
  for (const e of out) e.stallShare = shares(e.stalls);
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}

function addRow(e: LineStalls, r: SourceRow) {
  e.samples += r.samples;
  e.samplesNotIssued += r.samplesNotIssued;
  if (r.instructionsExecuted !== null) e.instructionsExecuted = (e.instructionsExecuted ?? 0) + r.instructionsExecuted;
  for (const [k, v] of Object.entries(r.stalls)) e.stalls[k] = (e.stalls[k] ?? 0) + v;
  for (const [k, v] of Object.entries(r.stallsNotIssued)) e.stallsNotIssued[k] = (e.stallsNotIssued[k] ?? 0) + v;
}

export function matchFile<T extends { file?: string }>(fns: T[], file: string): T[] {
  const norm = (p: string) => p.replace(/\\/g, '/').replace(/\/+/g, '/').replace(/^\.\//, '');
  const want = norm(file);
  const exact = fns.filter(f => norm(f.file ?? '') === want);
  if (exact.length) return exact;
  const suffix = fns.filter(f => {
    const have = norm(f.file ?? '');
    return have.endsWith('/' + want) || want.endsWith('/' + have);
  });
  if (suffix.length) return suffix;
  const base = want.split('/').pop();
  return fns.filter(
    f =>
      norm(f.file ?? '')
        .split('/')
        .pop() === base,
  );
}

function isProfile(r: unknown): r is KernelProfile {
  return !!r && typeof r === 'object' && 'stallShare' in r && 'durationNs' in r;
}

/** Flattens the accepted metric inputs to name → number|null pairs. */
function metricValues(input: MetricsInput | null | undefined): [string, number | null][] {
  if (!input || typeof input !== 'object') return [];
  let entries: [string, unknown][];
  if (input instanceof Map) entries = [...input.entries()];
  else if (Array.isArray((input as DetailsKernel).sections)) entries = Object.entries(detailsMetrics(input as DetailsKernel));
  else if ('metrics' in input && input.metrics && typeof input.metrics === 'object' && 'kernelName' in input)
    entries = Object.entries((input as RawKernelRow).metrics);
  else entries = Object.entries(input);
  return entries.map(([k, v]) => [k, toValue(v)]);
}

function toValue(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string') return parseNumber(v);
  if (v && typeof v === 'object' && 'value' in v) {
    const x = (v as { value: unknown }).value;
    return typeof x === 'number' && Number.isFinite(x) ? x : null;
  }
  return null;
}
