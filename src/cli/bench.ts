// `unroll-lens bench` and `unroll-lens stalls`: GPU timing, correctness and stall reasons.
import * as fs from 'fs';
import * as path from 'path';
import { CudaDocuments } from '../engine/parse/documents';
import { ScanInputError } from '../engine/parse/scan';
import { detectToolchain, chooseArch } from '../engine/toolchain/toolchain';
import { resolveCompileFlags, splitCommandLine } from '../engine/toolchain/flags';
import { defaultCacheDir } from '../engine/variants/build';
import { DEFAULT_FACTORS, parseFactorList, UnrollFactor } from '../engine/variants/rewrite';
import { benchJson, benchLoop, BenchReport } from '../engine/profile/bench';
import { parseRawPage } from '../engine/profile/ncuCsv';
import { kernelProfile, stallsJson } from '../engine/profile/stalls';
import type { CliIO } from './main';
import { UsageError } from './main';
import { Progress } from './progress';

function option(args: string[], i: number, a: string): [string, number] {
  if (a.includes('=')) return [a.slice(a.indexOf('=') + 1), i];
  if (args[i + 1] === undefined) throw new UsageError(`${a} needs a value`);
  return [args[i + 1], i + 1];
}

function pct(x: number | undefined | null): string {
  return x === undefined || x === null ? '-' : `${(x * 100).toFixed(1)}%`;
}

function renderBench(r: BenchReport): string {
  if (r.instantiations.length > 1) {
    return r.instantiations.map(x => renderBench({ ...r, kernel: `${x.kernel}${x.blockSize ? ` block ${x.blockSize}` : ''}`, variants: x.variants, instantiations: [] })).join('\n');
  }
  const lines = [`${r.kernel} on ${r.gpu ?? 'unknown GPU'} · clocks ${r.clockControl === 'base' ? 'locked to base by ncu' : 'not locked (--clock-control none)'} · speedup vs the file as written`];
  lines.push('variant      status       instr  regs  samples   median ms    IQR ms     CV  speedup  no_instruction  top stall');
  for (const v of r.variants) {
    const top = v.stallShare ? Object.entries(v.stallShare).sort((a, b) => b[1] - a[1])[0] : undefined;
    lines.push([
      v.label.padEnd(12), v.status.padEnd(11), String(v.kernelInstructions ?? '-').padStart(6), String(v.registers ?? '-').padStart(5),
      String(v.samples).padStart(8), (v.medianMs?.toFixed(4) ?? '-').padStart(11), (v.iqrMs?.toFixed(4) ?? '-').padStart(9),
      (v.cv !== null ? `${(v.cv * 100).toFixed(1)}%` : '-').padStart(6),
      (v.speedup !== null ? `${v.speedup.toFixed(2)}×${v.withinNoise && v.label !== 'as-written' ? '~' : ''}` : '-').padStart(8),
      pct(v.stallShare?.no_instruction).padStart(15), top ? `${top[0]} ${pct(top[1])}` : '-',
    ].join(' '));
    if (v.message) lines.push(`    ${v.message}`);
  }
  lines.push('~ = within noise (the interquartile ranges overlap)');
  return lines.join('\n') + '\n';
}

function renderLineStalls(r: BenchReport): string {
  if (r.lineStallsProblem) return `per-line stalls: ${r.lineStallsProblem}\n`;
  if (!r.lineStalls?.length) return '';
  const total = r.lineStalls.reduce((a, l) => a + l.samples, 0);
  const top = [...r.lineStalls].sort((a, b) => b.samples - a.samples).slice(0, 8);
  return '\nhottest source lines (warp-stall samples, file as written):\n' + top.map(l => {
    const reason = Object.entries(l.stallShare).sort((a, b) => b[1] - a[1])[0];
    return `  line ${String(l.line).padStart(4)}  ${((l.samples / Math.max(1, total)) * 100).toFixed(1).padStart(5)}%  ${reason ? `${reason[0]} ${(reason[1] * 100).toFixed(0)}%` : ''}  ${l.source.trim().slice(0, 60)}`;
  }).join('\n') + '\n';
}

export async function benchCommand(argv: string[], io: CliIO): Promise<number> {
  let file = '';
  let loops: number[] = [];
  let kernel: string | undefined;
  let factors: UnrollFactor[] = DEFAULT_FACTORS;
  let args: string[] = [];
  let samples = 20;
  let warmup = 2;
  let json = false;
  let clockControl: 'base' | 'none' = 'base';
  let timeoutS = 120;
  let launcher: string[] = [];
  let arch: string | null = null;
  let keep: string | undefined;
  let sourceStalls = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let v: string;
    if (a === '--json') json = true;
    else if (a.startsWith('--loop')) {
      [v, i] = option(argv, i, a);
      loops = v.split(',').map(Number);
      if (!loops.length || loops.some(n => !Number.isInteger(n) || n < 1)) throw new UsageError('--loop takes 1-based line numbers: --loop 40 or --loop 40,52');
    } else if (a.startsWith('--kernel')) [kernel, i] = option(argv, i, a);
    else if (a.startsWith('--factors')) {
      [v, i] = option(argv, i, a);
      try { factors = parseFactorList(v); } catch (e) { throw new UsageError((e as Error).message); }
    } else if (a.startsWith('--args')) { [v, i] = option(argv, i, a); args = splitCommandLine(v); }
    else if (a.startsWith('--samples')) { [v, i] = option(argv, i, a); samples = Math.max(1, Number(v) || 0); }
    else if (a.startsWith('--warmup')) { [v, i] = option(argv, i, a); warmup = Math.max(0, Number(v) || 0); }
    else if (a.startsWith('--clock-control')) {
      [v, i] = option(argv, i, a);
      if (v !== 'base' && v !== 'none') throw new UsageError('--clock-control is base or none');
      clockControl = v;
    } else if (a.startsWith('--timeout')) { [v, i] = option(argv, i, a); timeoutS = Math.max(1, Number(v) || 120); }
    else if (a.startsWith('--launcher')) { [v, i] = option(argv, i, a); launcher = splitCommandLine(v); }
    else if (a.startsWith('--arch')) [arch, i] = option(argv, i, a);
    else if (a.startsWith('--keep-reports')) [keep, i] = option(argv, i, a);
    else if (a === '--source-stalls') sourceStalls = true;
    else if (a.startsWith('-')) throw new UsageError(`unknown option '${a}' for bench`);
    else if (!file) file = a;
    else throw new UsageError('bench takes one file');
  }
  if (!file) throw new UsageError('bench needs a .cu file with main()');
  if (!loops.length) throw new UsageError('bench needs --loop LINE');
  const abs = path.resolve(file);
  let text: string;
  try { text = fs.readFileSync(abs, 'utf8'); } catch { throw new ScanInputError(`cannot read file: ${file}`); }
  const docs = await CudaDocuments.create();
  const analysis = docs.analyzeOnce(text, abs);
  const all = analysis.kernels.flatMap(k => k.loops.map(l => l.line));
  for (const l of loops) if (!all.includes(l)) throw new UsageError(`no loop in device code at line ${l} of ${file} (loops at ${all.join(', ') || 'none'})`);
  const toolchain = await detectToolchain({});
  const flags = resolveCompileFlags(abs, [process.cwd()], {});
  const chosen = chooseArch(arch, flags.arch, toolchain.gpus).arch;
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  const progress = new Progress('bench', factors.length + 1, io.isTTY ? io.err : null);
  try {
    const report = await benchLoop(abs, text, analysis, {
      toolchain, arch: chosen, flags, cacheDir: defaultCacheDir(), loops, factors, kernel, args, samples, warmup,
      clockControl, timeoutMs: timeoutS * 1000, launcher, signal: ac.signal, keepReportsDir: keep, sourceStalls,
      onProgress: msg => progress.tick(msg),
    });
    progress.done();
    io.out(json ? JSON.stringify(benchJson(report), null, 2) + '\n' : renderBench(report) + renderLineStalls(report));
    if (ac.signal.aborted) return 130;
    return report.variants.every(v => v.status === 'ok') ? 0 : 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

export async function stallsCommand(argv: string[], io: CliIO): Promise<number> {
  let input = '';
  let json = false;
  for (const a of argv) {
    if (a === '--json') json = true;
    else if (a.startsWith('-')) throw new UsageError(`unknown option '${a}' for stalls`);
    else if (!input) input = a;
    else throw new UsageError('stalls takes one report or CSV file');
  }
  if (!input) throw new UsageError('stalls needs a .ncu-rep report or a `--page raw --csv` export');
  if (!fs.existsSync(input)) throw new ScanInputError(`no such file: ${input}`);
  let csv: string;
  if (input.endsWith('.ncu-rep')) {
    const t = await detectToolchain({ probeGpu: false }).catch(() => null);
    const ncu = t?.ncu;
    if (!ncu || !t) throw new ScanInputError('reading a .ncu-rep needs ncu (Nsight Compute); export it elsewhere with `ncu -i report.ncu-rep --csv --page raw > report.csv` and pass the CSV');
    const r = await t.runner(ncu.path, ['--import', input, '--csv', '--page', 'raw'], { timeoutMs: 120_000 });
    if (r.exitCode !== 0) throw new ScanInputError(`ncu could not read ${input}: ${(r.stderr || r.stdout).trim()}`);
    csv = r.stdout;
  } else {
    csv = fs.readFileSync(input, 'utf8');
  }
  const rows = parseRawPage(csv).kernels;
  if (!rows.length) throw new ScanInputError(`${input}: no profiled kernels found (expected ncu's raw page: --csv --page raw)`);
  const out = stallsJson(rows);
  if (json) {
    io.out(JSON.stringify(out, null, 2) + '\n');
    return 0;
  }
  // One block per kernel: median duration over its profiled launches, mean stall shares.
  const groups = new Map<string, number[]>();
  out.kernels.forEach((k, i) => groups.set(k.name, [...(groups.get(k.name) ?? []), i]));
  for (const [name, idx] of groups) {
    const durations = idx.map(i => out.kernels[i].durationNs).filter((d): d is number => d !== null).sort((a, b) => a - b);
    const median = durations.length ? durations[Math.floor(durations.length / 2)] : null;
    const occ = idx.map(i => kernelProfile(rows[i]).achievedOccupancy).filter((x): x is number => x !== null);
    io.out(`${name}\n  ${idx.length} launch${idx.length === 1 ? '' : 'es'} · median duration ${median !== null ? (median / 1e3).toFixed(2) + ' us' : 'n/a'}` +
      `${occ.length ? ` · achieved occupancy ${(occ.reduce((a, b) => a + b, 0) / occ.length).toFixed(1)}%` : ''}\n`);
    const mean = (reason: string, key: 'stallShare' | 'stalls') => idx.reduce((a, i) => a + (out.kernels[i][key][reason] ?? 0), 0) / idx.length;
    const reasons = Object.keys(out.kernels[idx[0]].stallShare);
    for (const reason of reasons.sort((a, b) => mean(b, 'stallShare') - mean(a, 'stallShare')).slice(0, 6)) {
      io.out(`  ${reason.padEnd(20)} ${(mean(reason, 'stallShare') * 100).toFixed(1).padStart(5)}%  (${mean(reason, 'stalls').toFixed(2)} cycles per issued instruction)\n`);
    }
  }
  return 0;
}
