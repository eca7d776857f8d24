// The file as written's stalls per source line and per SASS instruction from the PC samples of
// its CUPTI-timed run (issue 25): no extra ncu run. The program's cubin for the arch is extracted
// (cuobjdump -xelf all, into a scratch folder removed after, which processGuard removes on a
// cancel or a kill too) and listed with its line table (nvdisasm -c -gi, as variants/inspect.ts
// lists cubins); pcLines.ts attaches the samples to it. Whatever stops that (no samples for the
// kernel, a pcerror, a listing of other code, no disassembler) is a problem: the caller falls back
// to ncu's source page (stages/lineStalls.ts).
import * as fs from 'fs';
import * as path from 'path';
import { parseNvdisasm, readCubin, type SassFunction } from '../../sass';
import type { Toolchain } from '../../toolchain/toolchain';
import { scratchDir } from '../../toolchain/processGuard';
import type { VariantProgram } from '../stages/program';
import type { LineStallsResult } from '../stages/lineStalls';
import { MeasuredWith, MeasurementCache, measurementKeyFor } from '../measurementCache';
import { pcLineStalls, pcSassStalls } from './pcLines';
import { kernelSamples, pcSamplingProblem } from './pcStalls';
import type { PcSampling } from './timerRecords';
import type { LineStalls } from '../../profile/stalls';
import type { SourceLineStalls } from '../../../schema/types';

export interface PcSourceOptions {
  toolchain: Pick<Toolchain, 'cuobjdump' | 'nvdisasm' | 'runner'>;
  /** The arch the program was built for (`sm_90`, `sm_90a`). */
  arch: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** `kernel`'s function in the nvdisasm listing (with line info) of `program`'s cubin for the arch, or why there is none. */
async function programFunction(program: string, kernel: string, o: PcSourceOptions): Promise<SassFunction | string> {
  const { cuobjdump, nvdisasm, runner } = o.toolchain;
  if (!cuobjdump || !nvdisasm) return 'listing the program that ran needs cuobjdump and nvdisasm (CUDA Toolkit), not found';
  const timeoutMs = o.timeoutMs ?? 120_000;
  const work = scratchDir(undefined, 'unroll-lens-pcsrc-');
  try {
    const x = await runner(cuobjdump.path, ['-xelf', 'all', path.resolve(program)], { cwd: work, timeoutMs, signal: o.signal });
    if (x.cancelled) return 'cancelled';
    if (x.exitCode !== 0) return `cuobjdump -xelf failed: ${firstLine(x.stderr) ?? `exit ${x.exitCode ?? x.signal}`}`;
    const arch = o.arch.replace(/[af]$/, '');
    const cubins = fs
      .readdirSync(work)
      .filter(f => f.endsWith('.cubin'))
      .map(f => ({ file: path.join(work, f), info: readCubin(fs.readFileSync(path.join(work, f))) }))
      .filter(c => c.info.textSections.some(s => s.kernel === kernel))
      // the arch built for first (a fat binary may carry others)
      .sort((a, b) => Number(b.info.arch === arch) - Number(a.info.arch === arch));
    if (!cubins.length) return `the program has no cubin holding ${kernel}`;
    const l = await runner(nvdisasm.path, ['-c', '-gi', cubins[0].file], { timeoutMs, signal: o.signal });
    if (l.cancelled) return 'cancelled';
    if (l.exitCode !== 0 || l.signal) return `nvdisasm failed: ${firstLine(l.stderr) ?? `exit ${l.exitCode ?? l.signal}`}`;
    return parseNvdisasm(l.stdout).functions.find(f => f.name === kernel) ?? `nvdisasm listed no ${kernel}`;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const firstLine = (s: string) =>
  s
    .split('\n')
    .map(l => l.trim())
    .find(l => l);

/**
 * Per-line and per-instruction stalls of `kernel` from the samples `s` of `p`'s timed run, with
 * `sourceText` (the file as written) filling each line's text; a problem when there are none.
 */
async function pcSourceStalls(
  s: PcSampling | null,
  p: VariantProgram,
  kernel: string,
  sourceText: string,
  o: PcSourceOptions,
): Promise<LineStallsResult> {
  const none = (problem: string): LineStallsResult => ({ lineStalls: null, sassStalls: null, problem });
  const bad = pcSamplingProblem(s);
  if (bad || !s) return none(bad ?? 'no PC samples');
  if (kernelSamples(s, kernel) === 0) return none(`CUPTI PC sampling gave no samples in ${kernel}`);
  const fn = await programFunction(p.program, kernel, o);
  if (typeof fn === 'string') return none(fn);
  const sass = pcSassStalls(s, kernel, fn, p.label);
  if (!sass.stalls) return none(sass.note ?? `no PC samples in ${kernel}`);
  const lineStalls = pcLineStalls(s, kernel, fn, p.file, sourceText.split('\n'));
  if (!lineStalls.length)
    return none(`no PC sample of ${kernel} falls on a line of ${path.basename(p.file)} (no line table: built without -lineinfo?)`);
  return { lineStalls, sassStalls: sass.stalls, problem: null };
}

/**
 * pcSourceStalls through the measurement cache: keyed as a PC-sampled source-stalls entry (the
 * timer library and sampling period in the key: never an ncu entry's, nor one an ncu request
 * finds), so a re-run whose timing came from the cache (no samples this time) still has them.
 */
export async function cachedPcSourceStalls(
  s: PcSampling | null,
  p: VariantProgram,
  kernel: string,
  sourceText: string,
  o: PcSourceOptions & MeasuredWith,
  cache: { store: MeasurementCache | null; gpu: number | null },
): Promise<LineStallsResult & { cached: boolean }> {
  const key = cache.store ? measurementKeyFor({ ...o, lineStallsFrom: 'pc-sampling' }, p.program, cache.gpu, [kernel], sourceText) : null;
  const hit = key ? cache.store!.get(key) : null;
  if (hit?.lineStalls && hit.sassStalls) return { lineStalls: hit.lineStalls, sassStalls: hit.sassStalls, problem: null, cached: true };
  const r = await pcSourceStalls(s, p, kernel, sourceText, o);
  if (key && r.lineStalls && r.sassStalls)
    cache.store!.put(key, { groups: [], stdout: '', lineStalls: r.lineStalls, sassStalls: r.sassStalls });
  return { ...r, cached: false };
}

/** A sampling's lines as a result carries them (SourceLineStalls). */
export function sourceLineRows(ls: LineStalls[] | null): SourceLineStalls[] | null {
  return ls?.map(l => ({ line: l.line, samples: l.samples, stallShare: l.stallShare })) ?? null;
}
