// Stage 4, line stalls: warp-stall samples per source line of one program (the file as written
// in benchLoop), from one launch under ncu's SourceCounters section.
import * as fs from 'fs';
import * as path from 'path';
import { safeWriteFile } from '../../base/safeWrite';
import { MissingToolError } from '../../toolchain/discover';
import type { BenchOptions } from '../options';
import { parseSourcePage } from '../../profile/ncuCsv';
import { classifyNcuFailure } from '../../profile/ncuErrors';
import { ncuPermissionFix } from '../../profile/permissionHelp';
import { SassStalls, sassStallsOf } from '../../profile/sassStalls';
import { LineStalls, perLineStalls } from '../../profile/stalls';
import { escapeRegex, launch, LaunchOptions, programCommand, runFolder, VariantProgram } from './program';
import { scratchDir } from '../../toolchain/processGuard';
import { MeasuredWith, MeasurementCache, measurementKeyFor } from '../measurementCache';
import { timerFor } from '../timer';

export interface LineStallsResult {
  lineStalls: LineStalls[] | null;
  /**
   * The same launch's samples per SASS instruction of `kernel` (factor: the program's label),
   * null with lineStalls, or when the page has no SASS rows.
   */
  sassStalls: SassStalls | null;
  /** Why lineStalls is missing. */
  problem: string | null;
}

export type LineStallsOptions = LaunchOptions &
  Pick<BenchOptions, 'warmup' | 'clockControl' | 'cacheControl' | 'timer' | 'timeoutMs' | 'signal' | 'keepReportsDir' | 'runDir'> & {
    /** Environment of the ncu run (CUDA_VISIBLE_DEVICES, the lock's TMPDIR). */
    env?: Record<string, string>;
  };

/** Samples `kernel` in the program; a failure comes back as `problem`, never thrown. */
async function sampleLineStalls(
  p: VariantProgram,
  kernel: string,
  o: LineStallsOptions,
  progress?: (message: string) => void,
): Promise<LineStallsResult> {
  progress?.('sampling stalls per source line');
  try {
    return { ...(await sourceLineStalls(p, kernel, o)), problem: null };
  } catch (e) {
    return { lineStalls: null, sassStalls: null, problem: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * Per-line stalls of a program and its source, from the measurement cache when the same program,
 * source and settings were sampled before (a cached re-run runs nothing), else sampled now and
 * stored when complete. The one path the bench and the sweep (--source-stalls) take.
 */
export async function cachedLineStalls(
  p: VariantProgram,
  kernel: string,
  sourceText: string,
  o: LineStallsOptions & MeasuredWith,
  cache: { store: MeasurementCache | null; gpu: number | null },
  progress?: (message: string) => void,
): Promise<LineStallsResult & { cached: boolean }> {
  const key = cache.store ? measurementKeyFor(o, p.program, cache.gpu, [kernel], sourceText) : null;
  const hit = key ? cache.store!.get(key) : null;
  // An entry from before SASS-level samples were kept has no sassStalls key: not complete, sampled again.
  if (hit?.lineStalls && hit.sassStalls !== undefined)
    return { lineStalls: hit.lineStalls, sassStalls: hit.sassStalls, problem: null, cached: true };
  const r = await sampleLineStalls(p, kernel, o, progress);
  if (key && r.lineStalls && !r.problem)
    cache.store!.put(key, { groups: [], stdout: '', lineStalls: r.lineStalls, sassStalls: r.sassStalls });
  return { ...r, cached: false };
}

/** One launch under ncu's SourceCounters section, exported as the cuda,sass source page. */
async function sourceLineStalls(
  p: VariantProgram,
  kernel: string,
  o: LineStallsOptions,
): Promise<{ lineStalls: LineStalls[]; sassStalls: SassStalls | null }> {
  const t = o.toolchain;
  if (!t.ncu) throw new MissingToolError('ncu', []);
  const ncu = t.ncu.path;
  // With a launcher the report must be where the node writes it and this machine reads it.
  const work = scratchDir(o.runDir, 'unroll-lens-src-');
  try {
    const report = path.join(work, 'source');
    const prof = await launch(
      o,
      [
        ncu,
        '--kernel-name-base',
        'mangled',
        '--kernel-name',
        `regex:^${escapeRegex(kernel)}$`,
        '--launch-skip',
        String(o.warmup),
        '--launch-count',
        '1',
        '--section',
        'SourceCounters',
        '--section',
        'WarpStateStats',
        '--import-source',
        'yes',
        '--clock-control',
        o.clockControl,
        '--cache-control',
        o.cacheControl ?? 'all',
        '--export',
        report,
        '--force-overwrite',
        ...programCommand(p.program, o),
      ],
      // ncu's profiling lock lives in $TMPDIR (gpuSlots.ts): keep the shared one.
      { timeoutMs: o.timeoutMs * 4, signal: o.signal, cwd: runFolder(p), env: o.env, sharedTemp: true },
    );
    if (prof.exitCode !== 0) {
      const f = classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode);
      // a timer that needed no counters (CUPTI): its timings stand, only this sampling was refused
      const fix = f.kind === 'permission' && !timerFor(o).needsCounterPermission ? ncuPermissionFix(true) : f.fix;
      throw new Error(`${f.message}${fix ? ` Fix: ${fix}` : ''}`);
    }
    const page = await t.runner(ncu, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'source', '--print-source', 'cuda,sass'], {
      timeoutMs: 300_000,
      signal: o.signal,
    });
    if (o.keepReportsDir) safeWriteFile(o.keepReportsDir, `${path.basename(p.file, '.cu')}-source.csv`, page.stdout, { fsync: false });
    const parsed = parseSourcePage(page.stdout);
    return { lineStalls: perLineStalls(parsed, p.file), sassStalls: sassStallsOf(parsed, kernel, p.label) };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
