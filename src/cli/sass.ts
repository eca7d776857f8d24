// `unroll-lens sass`: SASS cost of a file as written, and of each unroll factor of one loop.
import * as fs from 'fs';
import * as path from 'path';
import { CudaDocuments } from '../engine/parse/documents';
import { detectToolchain, chooseArch } from '../engine/toolchain/toolchain';
import { resolveCompileFlags } from '../engine/toolchain/flags';
import { defaultCacheDir, VariantBuilder } from '../engine/variants/build';
import { FileSassReport, LoopReport, VariantInspector } from '../engine/variants/inspect';
import { DEFAULT_FACTORS, factorLabel, parseFactorList, UnrollFactor } from '../engine/variants/rewrite';
import { ScanInputError } from '../engine/parse/scan';
import type { CliIO } from './main';
import { UsageError } from './main';
import { Progress } from './progress';

interface SassArgs {
  file: string;
  arch: string | null;
  loop: number | null;
  factors: UnrollFactor[];
  kernel: string | null;
  jobs: number | null;
  json: boolean;
}

function parseArgs(args: string[]): SassArgs {
  const out: SassArgs = { file: '', arch: null, loop: null, factors: DEFAULT_FACTORS, kernel: null, jobs: null, json: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === '--json') out.json = true;
    else if (a.startsWith('--arch')) out.arch = value();
    else if (a.startsWith('--loop')) {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new UsageError('--loop takes a 1-based line number');
      out.loop = n;
    } else if (a.startsWith('--factors')) {
      try {
        out.factors = parseFactorList(value());
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
    } else if (a.startsWith('--kernel')) out.kernel = value();
    else if (a.startsWith('--jobs')) out.jobs = Math.max(1, Number(value()) || 1);
    else if (a.startsWith('-')) throw new UsageError(`unknown option '${a}' for sass`);
    else if (!out.file) out.file = a;
    else throw new UsageError('sass takes one file');
  }
  if (!out.file) throw new UsageError('sass needs a .cu file');
  if (out.arch && !/^sm_\d+[af]?$/.test(out.arch)) throw new UsageError(`--arch must look like sm_90, not '${out.arch}'`);
  return out;
}

/** The documented `sass --json` contract (docs/cli.md). */
export function toSassJson(file: FileSassReport, loop: LoopReport | null) {
  return {
    arch: file.arch,
    nvcc: file.nvcc,
    kernels: file.kernels.map(k => ({
      name: k.name, demangled: k.demangled, instructions: k.instructions, bytes: k.bytes, registers: k.registers,
      spillStores: k.spillStores, spillLoads: k.spillLoads, sharedBytes: k.sharedBytes,
    })),
    ...(loop ? {
      loop: {
        line: loop.line,
        variants: loop.variants.map(v => ({
          factor: v.factor, status: v.status, kernel: v.kernel, kernelInstructions: v.kernelInstructions,
          loopInstructions: v.loopInstructions, effectiveUnroll: v.effectiveUnroll, registers: v.registers,
          spillStores: v.spillStores, identicalTo: v.identicalTo,
          ...(v.failure ? { error: v.failure.messages.filter(m => m.severity === 'error').map(m => m.message).join('\n') || v.failure.kind } : {}),
        })),
        notes: loop.notes,
      },
    } : {}),
  };
}

function pad(s: string, n: number, right = false): string {
  return s.length >= n ? s : right ? ' '.repeat(n - s.length) + s : s + ' '.repeat(n - s.length);
}

function renderFile(r: FileSassReport): string {
  const lines = [`nvcc ${r.nvcc} · ${r.arch} · counts from ${r.disassembler}${r.cached ? ' (cached)' : ''}`];
  lines.push(`${pad('kernel', 60)} ${pad('instr', 7, true)} ${pad('bytes', 8, true)} ${pad('regs', 5, true)} ${pad('spill st/ld', 12, true)}`);
  for (const k of r.kernels) {
    lines.push(`${pad(k.demangled.length > 60 ? k.demangled.slice(0, 59) + '…' : k.demangled, 60)} ${pad(String(k.instructions), 7, true)} ${pad(String(k.bytes), 8, true)} ${pad(String(k.registers), 5, true)} ${pad(`${k.spillStores}/${k.spillLoads}`, 12, true)}`);
  }
  return lines.join('\n') + '\n';
}

function renderLoop(r: LoopReport): string {
  const lines = [`\nloop at line ${r.line} in ${r.kernel} (as written: ${factorLabel(r.written)})`];
  lines.push(`${pad('factor', 10)} ${pad('status', 8)} ${pad('kernel instr', 13, true)} ${pad('loop instr', 11, true)} ${pad('nvcc unroll', 12, true)} ${pad('regs', 5, true)} ${pad('spills', 7, true)}  same as`);
  for (const v of r.variants) {
    const eff = v.effectiveUnroll === null ? '?' : `×${v.effectiveUnroll}${v.fullyUnrolled ? ' (full)' : ''}`;
    lines.push(`${pad(String(v.factor), 10)} ${pad(v.status, 8)} ${pad(String(v.kernelInstructions ?? '-'), 13, true)} ${pad(String(v.loopInstructions ?? '-'), 11, true)} ${pad(v.status === 'ok' ? eff : '-', 12, true)} ${pad(String(v.registers ?? '-'), 5, true)} ${pad(String(v.spillStores ?? '-'), 7, true)}  ${v.identicalTo ?? ''}`);
    if (v.failure) for (const m of v.failure.messages.filter(x => x.severity === 'error').slice(0, 3)) lines.push(`    ${v.failure.kind}: ${m.file ? `${m.file}:${m.line ?? ''}: ` : ''}${m.message.split('\n')[0]}`);
  }
  for (const n of r.notes) lines.push(`note: ${n}`);
  if (r.limitation) lines.push(`note: ${r.limitation}`);
  return lines.join('\n') + '\n';
}

export async function sassCommand(argv: string[], io: CliIO): Promise<number> {
  const a = parseArgs(argv);
  const file = path.resolve(a.file);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new ScanInputError(`cannot read file: ${a.file}`);
  }
  const docs = await CudaDocuments.create();
  const analysis = docs.analyzeOnce(text, file);
  const toolchain = await detectToolchain({});
  const flags = resolveCompileFlags(file, [process.cwd()], {});
  for (const w of flags.warnings) io.err(`unroll-lens: ${w}\n`);
  const { arch } = chooseArch(a.arch, flags.arch, toolchain.gpus);
  const builder = new VariantBuilder({ nvcc: toolchain.nvcc, arch, flags, cacheDir: defaultCacheDir(), concurrency: a.jobs ?? undefined, runner: toolchain.runner });
  const inspector = new VariantInspector({ toolchain, builder, arch });
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  try {
    if (a.loop !== null && !analysis.kernels.some(k => k.loops.some(l => l.line === a.loop))) {
      throw new UsageError(`no loop in device code at line ${a.loop} of ${a.file} (loops at ${analysis.kernels.flatMap(k => k.loops.map(l => l.line)).join(', ') || 'none'})`);
    }
    const progress = new Progress('nvcc', a.loop !== null ? a.factors.length + 3 : 2, io.isTTY ? io.err : null);
    const fileReport = await inspector.inspectFile(file, text, analysis, { signal: ac.signal, onProgress: () => progress.tick('file as written') });
    if (fileReport.status !== 'ok') {
      progress.done();
      const msgs = fileReport.failure?.messages.filter(m => m.severity === 'error') ?? [];
      io.err(`unroll-lens: ${a.file} does not compile (${fileReport.failure?.kind}):\n${msgs.map(m => `  ${m.file ?? ''}${m.line ? `:${m.line}` : ''}: ${m.message}`).join('\n')}\n`);
      return fileReport.status === 'cancelled' ? 130 : 1;
    }
    let loopReport: LoopReport | null = null;
    if (a.loop !== null) {
      loopReport = await inspector.inspectLoop(file, text, analysis, a.loop, a.factors, {
        signal: ac.signal, kernel: a.kernel ?? undefined, onProgress: (_d, _t, key) => progress.tick(key),
      });
    }
    progress.done();
    if (ac.signal.aborted) {
      io.err('unroll-lens: cancelled\n');
      return 130;
    }
    if (a.json) io.out(JSON.stringify(toSassJson(fileReport, loopReport), null, 2) + '\n');
    else io.out(renderFile(fileReport) + (loopReport ? renderLoop(loopReport) : ''));
    return 0;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}
