#!/usr/bin/env node
// Summary of `npm run bench:gpu` (scripts/device/bench-gpu.sh, issue 11): reads the hand loop's
// ncu raw-page CSVs and the `unroll-lens bench --json` outputs from one output folder, prints a
// markdown table and PASS/MISS per target, and writes summary.md and summary.json there.
// Plain Node (20+), no packages: it runs on GPU machines that only have the node binary.
//
//   node scripts/device/bench-gpu-summary.mjs DIR
//
// DIR holds (as bench-gpu.sh writes it): hand/hand-<factor>.csv and hand/hand-loop.wall_s;
// ours-cold.json, ours-cached.json and, with 2 GPUs, ours-gpus-0.json and ours-gpus-0-1.json,
// each with <name>.wall_s (seconds, as timed by the shell) and <name>.exit; env.txt. Since issue
// 25 (the CUPTI timer by default) also hand-time/ (the hand loop timing only, ncu's flush),
// hand-nocache/ (timing only, --cache-control none: the medians a CUPTI timing must match) and
// ours-nostall.json (`bench --stalls off`); older folders have none and are judged as before.
// The pure functions are exported for test/unit/benchGpuSummary.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FACTORS = ['default', '1', '2', '4', '8', '16', 'full'];
export const TARGETS = { ratio: 0.5, medianDiff: 0.01, speedup2: 1.7, cachedS: 2 };
/** Issue 25, a bench timed by the CUPTI timer: against the hand loop with stalls, the timing-only hand loop, and ncu unflushed. */
export const NATIVE_TARGETS = { stallsRatio: 0.2, timingRatio: 0.25, medianDiff: 0.005, speedup2: 1.8 };

/** RFC 4180 records (quoted fields may hold commas and doubled quotes); empty lines skipped. */
export function parseCsv(text) {
  const records = [];
  let record = [];
  let field = '';
  let quoted = false;
  let any = false;
  const end = () => {
    record.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') {
      quoted = true;
      any = true;
    } else if (c === ',') {
      end();
      any = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      if (any || field) {
        end();
        records.push(record);
      }
      record = [];
      field = '';
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || field) {
    end();
    records.push(record);
  }
  return records;
}

/**
 * ncu `--csv --page raw` output, as saved from its stdout or from `--import`: ncu's own lines
 * (==PROF== …) and the program's output may come first; the CSV starts at the header row whose
 * first column is "ID", then a units row, then one row per profiled launch.
 */
export function parseRawPage(text) {
  const lines = String(text)
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/);
  const start = lines.findIndex(l => /^"ID",/.test(l));
  if (start < 0) return { columns: [], units: [], rows: [] };
  const records = parseCsv(lines.slice(start).join('\n'));
  const columns = records[0];
  const units = records[1] ?? [];
  const rows = records.slice(2).filter(r => r.length === columns.length && /^\d+$/.test(r[0]));
  return { columns, units, rows };
}

/** ncu's number text ("13,120", "58.208") → number; null for "", "n/a" and the like. */
export function parseNumber(text) {
  const t = String(text ?? '')
    .trim()
    .replace(/,(?=\d{3}(?:\D|$))/g, '');
  if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) return null;
  return Number(t);
}

const NS_PER = { ns: 1, nsecond: 1, us: 1e3, usecond: 1e3, µs: 1e3, ms: 1e6, msecond: 1e6, s: 1e9, second: 1e9 };

/**
 * The launches' gpu__time_duration.sum in milliseconds, in row order, converted by the units
 * row (ns, us, ms, s; none: ns). `kernel`, a RegExp, keeps only rows whose "Kernel Name" matches.
 */
export function durationsMs(text, kernel) {
  const page = parseRawPage(text);
  const col = page.columns.indexOf('gpu__time_duration.sum');
  if (col < 0) return [];
  const unit = (page.units[col] ?? '').trim();
  const perNs = unit === '' ? 1 : NS_PER[unit];
  if (perNs === undefined) throw new Error(`gpu__time_duration.sum in unknown unit "${unit}"`);
  const nameCol = page.columns.indexOf('Kernel Name');
  const out = [];
  for (const r of page.rows) {
    if (kernel && !kernel.test(r[nameCol] ?? '')) continue;
    const v = parseNumber(r[col]);
    // Scaled without binary noise: 58.272 us is 0.058272 ms, not 0.058272000000000004.
    if (v !== null) out.push(Number(((v * perNs) / 1e6).toPrecision(12)));
  }
  return out;
}

/** How many warp-stall ratio columns the raw page has (the hand loop collects the tool's set). */
export function stallColumns(text) {
  return parseRawPage(text).columns.filter(c => /^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$/.test(c)).length;
}

/** The median as the tool computes it (src/engine/gpu/stages/summary.ts: linear quantile 0.5). */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  if (!s.length) return null;
  const pos = (s.length - 1) / 2;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/**
 * `unroll-lens bench --json` rows by label: median ms and samples. A row with identicalTo (the
 * same machine code as an earlier row, measured once) carries that row's numbers; where it does
 * not, they are taken from the row it names.
 */
export function oursByLabel(report) {
  const rows = new Map((report?.variants ?? []).map(v => [v.label, v]));
  const out = new Map();
  for (const [label, v] of rows) {
    let src = v;
    for (let hops = 0; src && (src.medianMs === null || src.medianMs === undefined) && src.identicalTo && hops < rows.size; hops++) {
      src = rows.get(src.identicalTo);
    }
    out.set(label, {
      medianMs: src?.medianMs ?? null,
      samples: src?.samples ?? 0,
      status: v.status,
      identicalTo: v.identicalTo ?? null,
    });
  }
  return out;
}

/**
 * Per factor: the hand loop's median (its CSV) and ours (the JSON row of the same label), and
 * |ours − hand| / hand; `largest` is the largest of those (null when a factor lacks either side).
 * hand: factor → durations in ms.
 */
export function compareMedians(hand, report, factors = FACTORS) {
  const ours = oursByLabel(report);
  const rows = factors.map(f => {
    const h = hand[f] ?? [];
    const o = ours.get(f);
    const handMs = median(h);
    const oursMs = o?.medianMs ?? null;
    return {
      factor: f,
      handMs,
      handSamples: h.length,
      oursMs,
      oursSamples: o?.samples ?? 0,
      identicalTo: o?.identicalTo ?? null,
      diff: handMs !== null && oursMs !== null && handMs > 0 ? Math.abs(oursMs - handMs) / handMs : null,
    };
  });
  const complete = rows.every(r => r.diff !== null);
  const largest = complete ? Math.max(...rows.map(r => r.diff)) : null;
  const asWritten = ours.get('as-written');
  return { rows, largest, asWritten: asWritten ? { medianMs: asWritten.medianMs, samples: asWritten.samples } : null };
}

const pass = ok => (ok === null ? 'MISS (not measured)' : ok ? 'PASS' : 'MISS');

/**
 * The whole summary from already-read inputs:
 *   { hand: {factor: ms[]}, handWallS, handStalls?: {factor: n}, cold: {report, wallS, exit},
 *     cached: {…}, gpus1?: {…}, gpus2?: {…} }   (report: the parsed JSON, or null)
 */
export function summarise(input) {
  const { hand, handWallS, cold, cached } = input;
  // a CUPTI timing runs with warm caches: its medians are ncu's with --cache-control none, not the flushed hand loop's
  const native = cold?.report?.measurement?.tool === 'cupti' && input.handNoCache && Object.keys(input.handNoCache).length > 0;
  const medians = compareMedians(native ? input.handNoCache : hand, cold?.report ?? null);
  // A wall time only counts for a run that finished (exit 0; unknown exit accepted).
  const timed = r => (r?.wallS > 0 && (r.exit === 0 || r.exit == null) ? r.wallS : null);
  const ratio = handWallS > 0 && timed(cold) ? timed(cold) / handWallS : null;
  const cachedGpuRuns = cached?.report?.timing?.gpuRuns ?? null;
  const gpus1 = input.gpus1 ?? null;
  const gpus2 = input.gpus2 ?? null;
  const speedup2 = timed(gpus1) && timed(gpus2) ? timed(gpus1) / timed(gpus2) : null;
  const exits = [cold, cached, gpus1, gpus2].filter(Boolean).map(r => r.exit);
  const medianTarget = native ? NATIVE_TARGETS.medianDiff : TARGETS.medianDiff;
  const speedup2Target = native ? NATIVE_TARGETS.speedup2 : TARGETS.speedup2;
  const nostall = input.nostall ?? null;
  const timingRatio = input.handTimeWallS > 0 && timed(nostall) ? timed(nostall) / input.handTimeWallS : null;
  const targets = {
    ratio: native
      ? { value: ratio, target: `≤ ${NATIVE_TARGETS.stallsRatio}`, ok: ratio === null ? null : ratio <= NATIVE_TARGETS.stallsRatio }
      : { value: ratio, target: `≤ ${TARGETS.ratio}`, ok: ratio === null ? null : ratio <= TARGETS.ratio },
    medians: {
      value: medians.largest,
      target: `≤ ${medianTarget * 100}%`,
      ok: medians.largest === null ? null : medians.largest <= medianTarget,
    },
    twoGpus: { value: speedup2, target: `≥ ${speedup2Target}×`, ok: speedup2 === null ? null : speedup2 >= speedup2Target },
    ...(native
      ? {
          timingRatio: {
            value: timingRatio,
            target: `≤ ${NATIVE_TARGETS.timingRatio}`,
            ok: timingRatio === null ? null : timingRatio <= NATIVE_TARGETS.timingRatio,
          },
        }
      : {}),
    cached: {
      value: cached?.wallS ?? null,
      gpuRuns: cachedGpuRuns,
      target: `< ${TARGETS.cachedS} s, 0 GPU runs`,
      ok: timed(cached) === null || cachedGpuRuns === null ? null : cached.wallS < TARGETS.cachedS && cachedGpuRuns === 0,
    },
  };
  // Other ways to spend the same GPU (ncu processes per GPU, how passes are split): wall time and accuracy.
  const alternatives = (input.alternatives ?? []).map(a => ({
    name: a.name,
    wallS: timed(a),
    ratio: handWallS > 0 && timed(a) ? timed(a) / handWallS : null,
    largestMedianDiff: compareMedians(hand, a.report ?? null).largest,
    timing: a.report?.timing ?? null,
  }));
  return {
    native: !!native,
    alternatives,
    factors: medians.rows.map(r => ({ ...r, handStallColumns: input.handStalls?.[r.factor] ?? null })),
    asWritten: medians.asWritten,
    largestMedianDiff: medians.largest,
    wall: {
      handS: handWallS ?? null,
      handTimeS: input.handTimeWallS ?? null,
      oursNoStallS: nostall?.wallS ?? null,
      timingRatio,
      oursColdS: cold?.wallS ?? null,
      oursCachedS: cached?.wallS ?? null,
      ratio,
      gpus1S: gpus1?.wallS ?? null,
      gpus2S: gpus2?.wallS ?? null,
      speedup2,
    },
    timing: {
      cold: cold?.report?.timing ?? null,
      cached: cached?.report?.timing ?? null,
      gpus1: gpus1?.report?.timing ?? null,
      gpus2: gpus2?.report?.timing ?? null,
    },
    gpu: cold?.report?.gpu ?? null,
    failedRuns: exits.filter(e => e !== 0 && e !== null && e !== undefined).length,
    targets,
  };
}

const ms = v => (v === null || v === undefined ? '—' : v.toFixed(4));
const secs = v => (v === null || v === undefined ? '—' : `${v.toFixed(2)} s`);
const pct = v => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(2)}%`);

/** The summary as markdown: the medians table, then wall times and targets. */
export function renderMarkdown(s) {
  const lines = [];
  lines.push(`GPU: ${s.gpu ?? 'unknown'}`, '');
  const reference = s.native ? 'hand ncu --cache-control none' : 'hand';
  lines.push(`| factor | ${reference} median ms (n) | ours median ms (n) | difference | µs |`, '|---|---|---|---|---|');
  for (const r of s.factors) {
    const same = r.identicalTo ? ` = ${r.identicalTo}` : '';
    const us = r.handMs !== null && r.oursMs !== null ? ((r.oursMs - r.handMs) * 1000).toFixed(2) : '—';
    lines.push(`| ${r.factor} | ${ms(r.handMs)} (${r.handSamples}) | ${ms(r.oursMs)} (${r.oursSamples})${same} | ${pct(r.diff)} | ${us} |`);
  }
  if (s.asWritten) lines.push(`| as-written | — | ${ms(s.asWritten.medianMs)} (${s.asWritten.samples}) | — |`);
  const t = s.targets;
  lines.push('', '| measure | value | target | result |', '|---|---|---|---|');
  lines.push(`| hand loop wall${s.native ? ' (durations and stall metrics)' : ''} | ${secs(s.wall.handS)} | | |`);
  lines.push(
    `| unroll-lens bench wall (cold caches${s.native ? ', CUPTI timer + PC-sampled stalls' : ''}) | ${secs(s.wall.oursColdS)} | | |`,
  );
  lines.push(`| ratio ours / hand | ${s.wall.ratio === null ? '—' : s.wall.ratio.toFixed(3)} | ${t.ratio.target} | ${pass(t.ratio.ok)} |`);
  if (t.timingRatio) {
    lines.push(`| hand loop wall (durations only) | ${secs(s.wall.handTimeS)} | | |`);
    lines.push(`| unroll-lens bench --stalls off wall (cold caches) | ${secs(s.wall.oursNoStallS)} | | |`);
    const r = s.wall.timingRatio;
    lines.push(`| ratio, timing only | ${r === null ? '—' : r.toFixed(3)} | ${t.timingRatio.target} | ${pass(t.timingRatio.ok)} |`);
  }
  lines.push(`| largest median difference | ${pct(s.largestMedianDiff)} | ${t.medians.target} | ${pass(t.medians.ok)} |`);
  lines.push(
    `| cached re-run | ${secs(s.wall.oursCachedS)}, ${t.cached.gpuRuns ?? '—'} GPU runs | ${t.cached.target} | ${pass(t.cached.ok)} |`,
  );
  const two =
    s.wall.speedup2 === null ? '— (fewer than 2 GPUs)' : `${s.wall.speedup2.toFixed(2)}× (${secs(s.wall.gpus1S)} → ${secs(s.wall.gpus2S)})`;
  lines.push(`| 2 GPUs vs 1 | ${two} | ${t.twoGpus.target} | ${pass(t.twoGpus.ok)} |`);
  if (s.alternatives?.length) {
    lines.push('', '| run (cold caches) | wall | ours / hand | largest median difference |', '|---|---|---|---|');
    lines.push(
      `| default settings | ${secs(s.wall.oursColdS)} | ${s.wall.ratio === null ? '—' : s.wall.ratio.toFixed(3)} | ${pct(s.largestMedianDiff)} |`,
    );
    for (const a of s.alternatives)
      lines.push(`| ${a.name} | ${secs(a.wallS)} | ${a.ratio === null ? '—' : a.ratio.toFixed(3)} | ${pct(a.largestMedianDiff)} |`);
  }
  if (s.failedRuns) lines.push('', `${s.failedRuns} unroll-lens run(s) exited non-zero: see their .stderr files.`);
  return lines.join('\n') + '\n';
}

function readNumber(file) {
  try {
    const v = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

function readRun(dir, name) {
  const json = path.join(dir, `${name}.json`);
  if (!fs.existsSync(json)) return null;
  let report = null;
  try {
    report = JSON.parse(fs.readFileSync(json, 'utf8'));
  } catch {
    /* empty or cut short: the .stderr says why */
  }
  return { report, wallS: readNumber(path.join(dir, `${name}.wall_s`)), exit: readNumber(path.join(dir, `${name}.exit`)) };
}

/** Reads an output folder of bench-gpu.sh. */
/** The hand loop's launches per factor: 20 after 2 warm-up, as the bench takes them. */
const HAND_LAUNCHES = 20;

/** A factor's ncu CSVs in run order: hand-<f>.csv, then hand-<f>.run2.csv … (RUNS > 1: few launches per run). */
function handRuns(dir, f) {
  const first = path.join(dir, `hand-${f}.csv`);
  if (!fs.existsSync(first)) return [];
  const files = [first];
  for (let n = 2; fs.existsSync(path.join(dir, `hand-${f}.run${n}.csv`)); n++) files.push(path.join(dir, `hand-${f}.run${n}.csv`));
  return files;
}

export function readDir(dir) {
  const hand = {};
  const handStalls = {};
  for (const f of FACTORS) {
    const files = handRuns(path.join(dir, 'hand'), f);
    if (!files.length) continue;
    hand[f] = files.flatMap(file => durationsMs(fs.readFileSync(file, 'utf8'))).slice(0, HAND_LAUNCHES);
    handStalls[f] = stallColumns(fs.readFileSync(files[0], 'utf8'));
  }
  const handNoCache = {};
  for (const f of FACTORS) {
    const files = handRuns(path.join(dir, 'hand-nocache'), f);
    if (files.length) handNoCache[f] = files.flatMap(file => durationsMs(fs.readFileSync(file, 'utf8'))).slice(0, HAND_LAUNCHES);
  }
  return {
    hand,
    handStalls,
    handNoCache,
    handTimeWallS: readNumber(path.join(dir, 'hand-time', 'hand-loop.wall_s')),
    nostall: readRun(dir, 'ours-nostall'),
    handWallS: readNumber(path.join(dir, 'hand', 'hand-loop.wall_s')),
    cold: readRun(dir, 'ours-cold'),
    cached: readRun(dir, 'ours-cached'),
    gpus1: readRun(dir, 'ours-gpus-0'),
    gpus2: readRun(dir, 'ours-gpus-0-1'),
    // ours-alt-<flags>.json: the same bench with other settings (bench-gpu.sh step e)
    alternatives: fs
      .readdirSync(dir)
      .filter(f => /^ours-alt-.*\.json$/.test(f))
      .sort()
      .map(f => ({ name: f.slice('ours-alt-'.length, -'.json'.length).replace(/_/g, ' '), ...readRun(dir, f.slice(0, -'.json'.length)) })),
  };
}

export function main(argv) {
  const dir = argv[0];
  if (!dir) {
    console.error('usage: node scripts/device/bench-gpu-summary.mjs DIR');
    return 2;
  }
  const s = summarise(readDir(dir));
  const md = renderMarkdown(s);
  fs.writeFileSync(path.join(dir, 'summary.md'), md);
  fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(s, null, 2) + '\n');
  process.stdout.write(md);
  // Non-zero when something did not run (a failed run, a factor without samples), not for a MISS.
  return s.failedRuns || s.largestMedianDiff === null ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
