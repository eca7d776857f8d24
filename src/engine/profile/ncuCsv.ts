// Readers for what Nsight Compute (ncu) prints with --csv. Formats as observed with ncu 2025.3.1
// (CUDA 13.0) on H100/H200 (test/fixtures/ncu/, README.md there says where each file came from):
//
//   --page raw      one header row of metric names ("ID","Process ID",…,"CC", then one column per
//                   metric), then a units row (ID cell empty; "ms", "us", "ns", "inst", "%", "" …),
//                   then one row per profiled kernel launch. Numbers may carry thousands separators
//                   ("13,120", "9,928,704") depending on --print-units / --print-fp; "n/a" where a
//                   metric could not be collected.
//   --page details  one row per metric: the same identity columns, then "Section Name",
//                   "Metric Name","Metric Unit","Metric Value" and, for rule results, "Rule Name",
//                   "Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"
//                   (metric rows end after the value, with a trailing comma). A rule's "Section
//                   Name" is the section's identifier ("WarpStateStats"), a metric's its title
//                   ("Warp State Statistics"). --print-summary per-kernel prints the same shape
//                   with "Invocations","Minimum","Maximum","Average" in place of ID and value.
//   --page source   blocks: --print-source sass: `"Kernel Name","…",` then an "Address","Source",
//                   metric… header and one row per SASS instruction; cuda,sass: `"File Path",…`,
//                   `"Function Name",…`, then "Line No","Source","Address","Source",metric… with a
//                   row per source line (address "-") followed by its SASS rows (line ""), gaps
//                   marked by a row of "..."; cuda: `"File Name",…` then "Line No","Source" only.
//                   ncu 2025.3.1 printed each kernel's sass block twice and repeated the SASS rows
//                   under each line (the line totals count them once); duplicates are dropped here.
//                   ncu does not escape quotes inside source text (`"8","#include "x.cuh""`), so
//                   source rows are split on the `","` separators, not by RFC 4180 rules.
//
// ncu's own messages (==PROF==, ==WARNING==, ==ERROR==, ==INFO==) and the profiled program's
// output share stdout with the CSV; they are dropped before parsing. Nothing here throws,
// whatever it is given. A launch row with an impossible duration (0 ns or less) is left out of
// parseRawPage's kernels and listed in `rejected`; the strict reader (rawPageStream.ts) refuses it.
import { parameterListStart } from '../../schema/kernelNames';
import { RANGES, rangeProblem } from '../../schema/ranges';

// ---- CSV --------------------------------------------------------------------------------------

/** ncu's own message lines: `==PROF== Connected to process …`, `==WARNING== …`, `==ERROR== …`. */
const NCU_LOG_LINE = /^\s*==(?:PROF|WARNING|WARN|ERROR|INFO|NOTE)==/;

/** Removes ncu's message lines (and a UTF-8 BOM), keeping everything else as it was. */
export function stripNcuLogLines(text: string): string {
  const s = asText(text).replace(/^\uFEFF/, '');
  if (!s.includes('==')) return s;
  return s
    .split(/(?<=\n)/)
    .filter(line => !NCU_LOG_LINE.test(line))
    .join('');
}

/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF or LF; a field starting with a
 * double quote runs to the matching closing quote and may hold commas, line breaks and doubled
 * quotes (""). Lenient where writers are not: a lone quote inside a quoted field that is not
 * followed by a separator is kept as a literal character, a quote inside an unquoted field is
 * literal, and an unterminated quoted field ends at the end of the text. Empty lines are skipped.
 */
export function parseCsv(text: string): string[][] {
  const s = asText(text);
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  const n = s.length;
  let fieldStarted = false; // something (even an empty quoted field) was read for this field
  const endRecord = () => {
    if (fieldStarted || record.length > 0) {
      record.push(field);
      records.push(record);
    }
    record = [];
    field = '';
    fieldStarted = false;
  };
  while (i < n) {
    const c = s[i];
    if (c === '"' && field === '' && !fieldStarted) {
      // Quoted field.
      fieldStarted = true;
      i++;
      let closed = false;
      while (i < n) {
        const d = s[i];
        if (d === '"') {
          const next = s[i + 1];
          if (next === '"') {
            field += '"';
            i += 2;
            continue;
          }
          if (next === undefined || next === ',' || next === '\n' || next === '\r') {
            i++;
            closed = true;
            break;
          }
          field += '"'; // lone quote in the middle of a quoted field: keep it
          i++;
          continue;
        }
        field += d;
        i++;
      }
      if (!closed) break;
      // Anything between the closing quote and the next separator is appended as-is.
      while (i < n && s[i] !== ',' && s[i] !== '\n' && s[i] !== '\r') field += s[i++];
      continue;
    }
    if (c === ',') {
      record.push(field);
      field = '';
      fieldStarted = false;
      i++;
      continue;
    }
    if (c === '\r' || c === '\n') {
      endRecord();
      if (c === '\r' && s[i + 1] === '\n') i++;
      i++;
      continue;
    }
    field += c;
    fieldStarted = true;
    i++;
  }
  endRecord();
  return records;
}

/**
 * One physical line of an ncu source page, split on its `","` separators (ncu quotes every cell
 * and does not escape quotes inside them). When there are more cells than `expected`, the extra
 * ones belong to the free-text column `textColumn` (source code containing `","`). Lines that are
 * not fully quoted go through the RFC 4180 parser.
 */
export function splitNcuLine(line: string, expected?: number, textColumn?: number): string[] {
  let body = asText(line).replace(/\r$/, '');
  const quoted = /^"/.test(body) && /"(,)?$/.test(body) && body.length >= 2;
  if (!quoted) return parseCsv(body)[0] ?? [];
  if (body.endsWith(',') && !body.endsWith('","')) {
    body = body.slice(0, -1); // trailing comma after the last quoted cell: `"Kernel Name","…",`
  }
  let cells = body.slice(1, -1).split('","');
  if (expected !== undefined && cells.length > expected && textColumn !== undefined && textColumn < expected) {
    const extra = cells.length - expected;
    cells = [
      ...cells.slice(0, textColumn),
      cells.slice(textColumn, textColumn + extra + 1).join('","'),
      ...cells.slice(textColumn + extra + 1),
    ];
  }
  return cells;
}

// ---- numbers and units ------------------------------------------------------------------------

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A number as ncu prints it: thousands separators ("1,234.56") are dropped; "", "n/a", "-",
 * "(!) n/a" and anything else that is not a plain decimal number give null.
 */
export function parseNumber(text: string | number | null | undefined): number | null {
  if (typeof text === 'number') return Number.isFinite(text) ? text : null;
  if (typeof text !== 'string') return null;
  let t = text.trim();
  if (!t) return null;
  if (t.includes(',')) {
    // Only well-formed thousands grouping: "1,234.5" yes; "0,5" (a decimal comma) or "1,2" no.
    if (!/^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?$/.test(t)) return null;
    t = t.replace(/,/g, '');
  }
  if (!NUMBER.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/** Nanoseconds per unit, for the time units ncu prints (newer: ns/us/ms/s; older: nsecond…). */
const TIME_UNITS = new Map<string, number>([
  ['ps', 1e-3],
  ['psecond', 1e-3],
  ['picosecond', 1e-3],
  ['picoseconds', 1e-3],
  ['ns', 1],
  ['nsec', 1],
  ['nsecond', 1],
  ['nanosecond', 1],
  ['nanoseconds', 1],
  ['us', 1e3],
  ['µs', 1e3],
  ['μs', 1e3],
  ['usec', 1e3],
  ['usecond', 1e3],
  ['microsecond', 1e3],
  ['microseconds', 1e3],
  ['ms', 1e6],
  ['msec', 1e6],
  ['msecond', 1e6],
  ['millisecond', 1e6],
  ['milliseconds', 1e6],
  ['s', 1e9],
  ['sec', 1e9],
  ['second', 1e9],
  ['seconds', 1e9],
]);

/**
 * A duration in nanoseconds. Units as ncu spells them: "ns", "us", "ms", "s" (ncu 2025.3.1,
 * also with --print-units base, which gives "ns"), and "nsecond", "usecond", "msecond",
 * "second" (older versions). Null for a null value or a unit that is not a time (e.g. "cycle").
 * A missing unit (no units row) is taken as ncu's base unit for time, nanoseconds.
 */
export function toNanoseconds(value: number | null | undefined, unit: string | null | undefined): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const u = (unit ?? '').trim();
  const factor = u === '' ? 1 : (TIME_UNITS.get(u) ?? TIME_UNITS.get(u.toLowerCase()));
  if (factor === undefined) return null;
  // Scale without binary noise: 1.69328 ms is 1693280 ns, not 1693280.0000000002.
  return Number((value * factor).toPrecision(12));
}

/** The duration metrics of a launch, in the order kernelProfile prefers them. */
const DURATION_METRICS = ['gpu__time_duration.sum', 'gpu__time_duration.avg', 'gpu__time_duration'] as const;

/**
 * Why a launch's duration is impossible, or null when it is possible or absent: ncu measures a
 * kernel that ran, so 0 ns or less (or more than a day) only comes from a damaged or edited CSV.
 * Such a row is rejected, never averaged into a median.
 */
export function impossibleDuration(metrics: Record<string, RawMetric>): string | null {
  for (const name of DURATION_METRICS) {
    const m = Object.prototype.hasOwnProperty.call(metrics, name) ? metrics[name] : undefined;
    if (!m || m.value === null) continue;
    const ns = toNanoseconds(m.value, m.unit);
    if (ns !== null && rangeProblem(RANGES.durationNs, ns))
      return `${name} is ${m.text.trim()}${m.unit ? ` ${m.unit}` : ''}, an impossible kernel duration (a launch ncu measured took more than 0 ns)`;
  }
  return null;
}

/** "(128, 1, 1)" → [128, 1, 1]; null when it is not three numbers. */
export type Dim3 = [number, number, number];
export function parseDim3(text: string | null | undefined): Dim3 | null {
  const m = /^\s*\(?\s*([\d,]+)\s*,\s*([\d,]+)\s*,\s*([\d,]+)\s*\)?\s*$/.exec(text ?? '');
  if (!m) return null;
  const v = [m[1], m[2], m[3]].map(x => Number(x.replace(/,/g, '')));
  return v.every(Number.isFinite) ? [v[0], v[1], v[2]] : null;
}

// ---- kernel names -----------------------------------------------------------------------------

/**
 * The kernel name without the casts ncu's source page puts on template arguments:
 * "void linear<(int)1, (int)0>(const float *, …)" → "void linear<1, 0>(const float *, …)",
 * which is how the raw and details pages print the same kernel.
 */
export function normalizeKernelName(name: string): string {
  return asText(name)
    .replace(
      /\((?:(?:unsigned|signed|const|long|short)\s+)*(?:int|long|short|char|bool|__int128|size_t|unsigned|long long)\)(?=[-\w'.])/g,
      '',
    )
    .replace(/\s+/g, ' ')
    .trim();
}

/** "void scale<4>(float *, int)" → "scale"; "ns::k<1>(int)" → "k"; a bare name stays as it is. */
export function kernelBaseName(name: string): string {
  let s = normalizeKernelName(name);
  // Drop the parameter list (the last balanced (...) group at the end); unlike instantiationLabel,
  // a name that is one group is dropped whole.
  const params = parameterListStart(s);
  if (params >= 0) s = s.slice(0, params);
  // Drop template arguments.
  let out = '';
  let depth = 0;
  for (const ch of s) {
    if (ch === '<') depth++;
    else if (ch === '>') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += ch;
  }
  out = out.trim();
  const words = out.split(/\s+/);
  const last = words[words.length - 1] ?? '';
  const parts = last.split('::');
  return parts[parts.length - 1] || out;
}

// ---- stall reason names -----------------------------------------------------------------------

/**
 * Short names of the stall columns in ncu's source page ("stall_long_sb", "stall_no_inst (Not
 * Issued)") and the older PC-sampling metric spellings, to the reason names of the
 * smsp__average_warps_issue_stalled_<reason>_per_issue_active metrics.
 */
const LEGACY_STALL_NAMES = new Map<string, string>([
  ['no_inst', 'no_instruction'],
  ['no_instructions', 'no_instruction'], // smsp__pcsamp_warps_issue_stalled_no_instructions
  ['long_sb', 'long_scoreboard'],
  ['short_sb', 'short_scoreboard'],
  ['lg', 'lg_throttle'],
  ['math', 'math_pipe_throttle'],
  ['mio', 'mio_throttle'],
  ['tex', 'tex_throttle'],
  ['imc', 'imc_miss'],
  ['sleep', 'sleeping'],
  ['dispatch', 'dispatch_stall'],
]);

/**
 * The canonical stall reason for a stall column or metric reason, and whether it is the
 * "not issued" variant: "stall_no_inst" → no_instruction; "stall_sleeping (Not Issued)" →
 * sleeping, not issued; "long_scoreboard_not_issued" → long_scoreboard, not issued;
 * "no_instructions" (PC sampling) → no_instruction. Unknown names pass through (lower-cased,
 * without the "stall_" prefix).
 */
export function canonicalStallReason(name: string): { reason: string; notIssued: boolean } {
  let s = asText(name).trim().toLowerCase();
  let notIssued = false;
  const paren = /\s*\(\s*not[\s_-]*issued\s*\)\s*$/;
  if (paren.test(s)) {
    notIssued = true;
    s = s.replace(paren, '');
  }
  if (s.endsWith('_not_issued')) {
    notIssued = true;
    s = s.slice(0, -'_not_issued'.length);
  }
  s = s.replace(/^stall_/, '').replace(/\s+/g, '_');
  return { reason: LEGACY_STALL_NAMES.get(s) ?? s, notIssued };
}

// ---- raw page ---------------------------------------------------------------------------------

export interface RawMetric {
  /** The cell as a number (thousands separators removed); null for "n/a", "" and text. */
  value: number | null;
  /** The cell as printed. */
  text: string;
  /** From the units row; null when the metric has no unit or there is no units row. */
  unit: string | null;
}

export interface RawKernelRow {
  /** ncu's result ID (0, 1, … in launch order of the profiled launches). */
  id: number | null;
  processId: number | null;
  processName: string | null;
  /** As printed (demangled unless --print-kernel-base says otherwise). */
  kernelName: string;
  context: number | null;
  stream: number | null;
  blockSize: Dim3 | null;
  gridSize: Dim3 | null;
  device: number | null;
  /** Compute capability as printed, e.g. "9.0". */
  cc: string | null;
  /** Every other column by metric name. */
  metrics: Record<string, RawMetric>;
}

export interface RawPage {
  kernels: RawKernelRow[];
  /** The header row's metric columns (identity columns excluded), in order. */
  metricNames: string[];
  /** Launch rows left out because a number in them is impossible (a duration of 0 ns or less), each with why. */
  rejected?: string[];
}

export const IDENTITY_COLUMNS = new Set([
  'ID',
  'Process ID',
  'Process Name',
  'Host Name',
  'Kernel Name',
  'Context',
  'Stream',
  'Block Size',
  'Grid Size',
  'Device',
  'CC',
]);

/** Parses `ncu --csv --page raw` output (ncu's message lines and program output around it allowed). */
export function parseRawPage(text: string): RawPage {
  const records = parseCsv(fromFirstLine(stripNcuLogLines(text), /^"?ID"?,/));
  const kernels: RawKernelRow[] = [];
  const rejected: string[] = [];
  let header: string[] | null = null;
  let units: string[] | null = null;
  let afterHeader = false;
  let metricNames: string[] = [];
  for (const rec of records) {
    if (rec[0] === 'ID') {
      header = rec.map(h => h.trim());
      units = null;
      afterHeader = true;
      metricNames = header.filter(h => h && !IDENTITY_COLUMNS.has(h));
      continue;
    }
    if (!header) continue;
    const first = afterHeader;
    afterHeader = false;
    const idCell = (rec[0] ?? '').trim();
    if (idCell === '') {
      // The units row comes right after the header; a later empty-ID row is noise.
      if (first) units = rec;
      continue;
    }
    const id = parseNumber(idCell);
    if (id === null || rec.length < Math.min(header.length, IDENTITY_COLUMNS.size)) continue; // not a data row
    const row = rawRow(header, units, rec);
    const impossible = impossibleDuration(row.metrics);
    if (impossible) rejected.push(`launch ID ${idCell}: ${impossible}`);
    else kernels.push(row);
  }
  return { kernels, metricNames, ...(rejected.length ? { rejected } : {}) };
}

function rawRow(header: string[], units: string[] | null, rec: string[]): RawKernelRow {
  return rawRowFromCells(header, units, rec);
}

/**
 * One launch row from its cells under `header` (and the units row, when there is one). `keep[i]`
 * false leaves metric column i out (the streaming reader keeps only the columns it needs).
 */
export function rawRowFromCells(header: string[], units: string[] | null, rec: string[], keep?: boolean[]): RawKernelRow {
  const cell = (name: string): string | null => {
    const i = header.indexOf(name);
    return i >= 0 && i < rec.length ? rec[i] : null;
  };
  const metrics: Record<string, RawMetric> = {};
  header.forEach((name, i) => {
    if (!name || IDENTITY_COLUMNS.has(name) || name === '__proto__' || (keep && !keep[i])) return;
    const text = rec[i] ?? '';
    const unit = units && units[i] !== undefined && units[i].trim() !== '' ? units[i].trim() : null;
    metrics[name] = { value: parseNumber(text), text, unit };
  });
  return {
    id: parseNumber(cell('ID')),
    processId: parseNumber(cell('Process ID')),
    processName: cell('Process Name'),
    kernelName: cell('Kernel Name') ?? '',
    context: parseNumber(cell('Context')),
    stream: parseNumber(cell('Stream')),
    blockSize: parseDim3(cell('Block Size')),
    gridSize: parseDim3(cell('Grid Size')),
    device: parseNumber(cell('Device')),
    cc: cell('CC'),
    metrics,
  };
}

// ---- details page -----------------------------------------------------------------------------

interface DetailsMetric {
  /** The metric's name or label, as --print-metric-name chose ("gpu__time_duration.sum", "Duration"). */
  name: string;
  unit: string | null;
  value: number | null;
  text: string;
}

interface DetailsRule {
  name: string;
  /** "OPT", "INF", "WRN", "ERR" … */
  type: string;
  description: string;
  speedupType: string | null;
  speedup: number | null;
}

interface DetailsSection {
  /** As printed: a metric row's section title, or a rule row's section identifier. */
  name: string;
  metrics: DetailsMetric[];
  rules: DetailsRule[];
}

export interface DetailsKernel {
  id: number | null;
  processId: number | null;
  processName: string | null;
  kernelName: string;
  blockSize: Dim3 | null;
  gridSize: Dim3 | null;
  device: number | null;
  cc: string | null;
  /** --print-summary pages only: how many launches the row summarises. */
  invocations?: number | null;
  sections: DetailsSection[];
}

export interface DetailsPage {
  kernels: DetailsKernel[];
}

/**
 * Parses `ncu --csv --page details` (and `--print-summary per-kernel`, whose value column is
 * "Average") into one entry per kernel launch (per summarised kernel), sections in the order
 * printed.
 */
export function parseDetailsPage(text: string): DetailsPage {
  const records = parseCsv(fromFirstLine(stripNcuLogLines(text), /^"?(?:ID|Process ID)"?,/));
  const kernels: DetailsKernel[] = [];
  const byKey = new Map<string, DetailsKernel>();
  let header: string[] | null = null;
  let col: (name: string) => number = () => -1;
  for (const rec of records) {
    if ((rec[0] === 'ID' || rec[0] === 'Process ID') && rec.includes('Section Name')) {
      header = rec.map(h => h.trim());
      const h = header;
      col = (name: string) => h.indexOf(name);
      continue;
    }
    if (!header) continue;
    const get = (name: string): string | null => {
      const i = col(name);
      return i >= 0 && i < rec.length ? rec[i] : null;
    };
    const sectionName = get('Section Name');
    if (sectionName === null) continue;
    const hasId = col('ID') >= 0;
    const idText = get('ID');
    if (hasId && parseNumber(idText) === null) continue;
    const key = [idText, get('Process ID'), get('Kernel Name'), get('Block Size'), get('Grid Size'), get('Device')].join('\u0000');
    let k = byKey.get(key);
    if (!k) {
      k = {
        id: parseNumber(idText),
        processId: parseNumber(get('Process ID')),
        processName: get('Process Name'),
        kernelName: get('Kernel Name') ?? '',
        blockSize: parseDim3(get('Block Size')),
        gridSize: parseDim3(get('Grid Size')),
        device: parseNumber(get('Device')),
        cc: get('CC'),
        ...(col('Invocations') >= 0 ? { invocations: parseNumber(get('Invocations')) } : {}),
        sections: [],
      };
      byKey.set(key, k);
      kernels.push(k);
    }
    let section = k.sections.find(s => s.name === sectionName);
    if (!section) {
      section = { name: sectionName, metrics: [], rules: [] };
      k.sections.push(section);
    }
    const ruleName = get('Rule Name');
    const metricName = get('Metric Name');
    if (ruleName) {
      section.rules.push({
        name: ruleName,
        type: get('Rule Type') ?? '',
        description: get('Rule Description') ?? '',
        speedupType: get('Estimated Speedup Type') || null,
        speedup: parseNumber(get('Estimated Speedup')),
      });
    } else if (metricName) {
      const valueText = get('Metric Value') ?? get('Average') ?? '';
      const unit = get('Metric Unit');
      section.metrics.push({
        name: metricName,
        unit: unit && unit.trim() ? unit.trim() : null,
        value: parseNumber(valueText),
        text: valueText,
      });
    }
  }
  return { kernels };
}

/** A details-page kernel's metrics by name (first occurrence wins), in the raw page's shape. */
export function detailsMetrics(kernel: DetailsKernel): Record<string, RawMetric> {
  const out: Record<string, RawMetric> = {};
  for (const s of kernel?.sections ?? []) {
    for (const m of s.metrics) {
      if (m.name in out || m.name === '__proto__') continue;
      out[m.name] = { value: m.value, text: m.text, unit: m.unit };
    }
  }
  return out;
}

// ---- source page ------------------------------------------------------------------------------

export interface SourceRow {
  /** 1-based source line: the row's own line (cuda views) or, for a SASS row, its line's. */
  line?: number;
  /** SASS rows: the instruction's address as printed ("0x7f07e17a4300"). */
  address?: string;
  /** The source line's text, or the SASS instruction (trimmed). */
  source: string;
  /** "Warp Stall Sampling (All Samples)" (else "# Samples"); 0 when the page has no samples. */
  samples: number;
  /** "Warp Stall Sampling (Not-issued Samples)". */
  samplesNotIssued: number;
  /** "Instructions Executed" (warp level); null when not collected. */
  instructionsExecuted: number | null;
  /** Samples per stall reason (canonical names, see canonicalStallReason), zeros omitted. */
  stalls: Record<string, number>;
  /** The "(Not Issued)" columns, zeros omitted. */
  stallsNotIssued: Record<string, number>;
}

export interface SourceFunction {
  /** The "Kernel Name" block header, else the "Function Name" one (as printed, with (int) casts). */
  kernelName: string;
  /** "File Path" / "File Name" block header (cuda and cuda,sass views). */
  file?: string;
  /** "Function Name" block header (cuda,sass view). */
  function?: string;
  view: 'sass' | 'cuda' | 'cuda,sass';
  /** One row per source line (cuda, cuda,sass) or per instruction (sass). */
  rows: SourceRow[];
  /** One row per SASS instruction, each address once (sass: the same rows; cuda: empty). */
  sass: SourceRow[];
}

export interface SourcePage {
  functions: SourceFunction[];
}

/** Parses `ncu --csv --page source --print-source sass | cuda,sass | cuda`. */
export function parseSourcePage(text: string): SourcePage {
  const lines = stripNcuLogLines(text).split(/\r?\n/);
  const functions: SourceFunction[] = [];
  let kernelName: string | undefined;
  let file: string | undefined;
  let func: string | undefined;
  let cur: SourceFunction | null = null;
  let cols: SourceColumns | null = null;
  let currentLine: number | undefined;
  let seenAddresses = new Set<string>();

  const finish = () => {
    if (!cur) return;
    if (!isDuplicateBlock(cur, functions)) functions.push(cur);
    cur = null;
  };

  for (const raw of lines) {
    if (!raw.trim()) continue;
    const first = splitNcuLine(raw);
    const tag = first[0];
    if (tag === 'Kernel Name' && first.length >= 2) {
      finish();
      kernelName = first[1];
      file = undefined;
      func = undefined;
      cols = null;
      continue;
    }
    if ((tag === 'File Path' || tag === 'File Name') && first.length >= 2) {
      finish();
      file = first[1];
      cols = null;
      continue;
    }
    if (tag === 'Function Name' && first.length >= 2) {
      finish();
      func = first[1];
      cols = null;
      continue;
    }
    if ((tag === 'Line No' || tag === 'Address') && first.includes('Source')) {
      finish();
      cols = sourceColumns(first);
      const view: SourceFunction['view'] = cols.line >= 0 && cols.address >= 0 ? 'cuda,sass' : cols.line >= 0 ? 'cuda' : 'sass';
      cur = {
        kernelName: kernelName ?? func ?? '',
        ...(file !== undefined && view !== 'sass' ? { file } : {}),
        ...(func !== undefined ? { function: func } : {}),
        view,
        rows: [],
        sass: [],
      };
      currentLine = undefined;
      seenAddresses = new Set();
      continue;
    }
    if (!cur || !cols) continue;
    const cells = splitNcuLine(raw, cols.count, cols.lineSource >= 0 ? cols.lineSource : cols.sassSource);
    const c = cols;
    const at = (i: number) => (i >= 0 && i < cells.length ? cells[i] : '');
    const lineText = at(c.line).trim();
    const address = at(c.address).trim();
    if (address === '...' || lineText === '...') continue;
    if (c.line >= 0 && lineText !== '') {
      const line = parseNumber(lineText);
      if (line === null) continue;
      currentLine = line;
      cur.rows.push(sourceRow(cells, c, { line, source: at(c.lineSource).trim() }));
      continue;
    }
    if (c.address >= 0 && address !== '' && address !== '-') {
      if (seenAddresses.has(address)) continue;
      seenAddresses.add(address);
      const row = sourceRow(cells, c, {
        ...(currentLine !== undefined ? { line: currentLine } : {}),
        address,
        source: at(c.sassSource).trim(),
      });
      cur.sass.push(row);
      if (cur.view === 'sass') cur.rows.push(row);
    }
  }
  finish();
  return { functions };
}

interface SourceColumns {
  count: number;
  line: number;
  lineSource: number;
  address: number;
  sassSource: number;
  samples: number;
  samplesNotIssued: number;
  instructions: number;
  stalls: { index: number; reason: string; notIssued: boolean }[];
}

function sourceColumns(header: string[]): SourceColumns {
  const h = header.map(x => x.trim());
  const line = h.indexOf('Line No');
  const address = h.indexOf('Address');
  const sourceAfter = (i: number) => (i >= 0 ? h.indexOf('Source', i + 1) : -1);
  const find = (...res: RegExp[]) => {
    for (const re of res) {
      const i = h.findIndex(x => re.test(x));
      if (i >= 0) return i;
    }
    return -1;
  };
  return {
    count: h.length,
    line,
    lineSource: sourceAfter(line),
    address,
    sassSource: sourceAfter(address),
    samples: find(/^Warp Stall Sampling \(All Samples\)$/i, /^Sampling Data \(All\)$/i, /^# Samples$/),
    samplesNotIssued: find(/^Warp Stall Sampling \(Not[- ]issued Samples\)$/i, /^Sampling Data \(Not Issued\)$/i),
    instructions: find(/^Instructions Executed$/i),
    stalls: h.flatMap((name, index) => (/^stall_/i.test(name) ? [{ index, ...canonicalStallReason(name) }] : [])),
  };
}

function sourceRow(cells: string[], c: SourceColumns, base: { line?: number; address?: string; source: string }): SourceRow {
  const num = (i: number) => (i >= 0 && i < cells.length ? parseNumber(cells[i]) : null);
  const stalls: Record<string, number> = {};
  const stallsNotIssued: Record<string, number> = {};
  for (const s of c.stalls) {
    const v = num(s.index);
    if (!v) continue;
    const into = s.notIssued ? stallsNotIssued : stalls;
    into[s.reason] = (into[s.reason] ?? 0) + v;
  }
  return {
    ...base,
    samples: num(c.samples) ?? 0,
    samplesNotIssued: num(c.samplesNotIssued) ?? 0,
    instructionsExecuted: num(c.instructions),
    stalls,
    stallsNotIssued,
  };
}

/** ncu 2025.3.1 prints some blocks twice; an exact repeat of an earlier block is dropped. */
function isDuplicateBlock(f: SourceFunction, earlier: SourceFunction[]): boolean {
  const sig = (x: SourceFunction) =>
    JSON.stringify([
      x.kernelName,
      x.file ?? null,
      x.function ?? null,
      x.view,
      x.rows.map(r => [r.line ?? null, r.address ?? null, r.samples, r.instructionsExecuted]),
    ]);
  const mine = sig(f);
  return earlier.some(e => e.kernelName === f.kernelName && sig(e) === mine);
}

// ---- helpers ----------------------------------------------------------------------------------

function asText(x: unknown): string {
  return typeof x === 'string' ? x : x === null || x === undefined ? '' : String(x);
}

/** The text from the first line matching `re` on (the whole text when none matches). */
function fromFirstLine(text: string, re: RegExp): string {
  const lines = text.split(/(?<=\n)/);
  const i = lines.findIndex(l => re.test(l));
  return i <= 0 ? text : lines.slice(i).join('');
}
