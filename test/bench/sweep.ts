// Sweep benchmark (part of `npm run bench`): the coordinate strategy against the exhaustive
// sweep on a two-loop space: evaluations, wall time and the best each finds.
//  - Recorded GPU sweeps (test/fixtures/sweep/gpu-*.json, exhaustive, recorded on a GPU): their
//    medians are replayed as the objective; the target is the coordinate search within 5% of
//    the exhaustive best.
//  - Always: real static sweeps of matvec_warp_per_row (two loops × the default factor set)
//    with nvcc, each strategy on its own fresh build cache.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { runSweep } from '../../src/engine/sweep/sweep';
import { staticRuleOf, staticScore } from '../../src/engine/sweep/objective';
import { replaySweep } from '../../src/engine/sweep/replay';
import { loadResult } from '../../src/engine/sweep/store';
import { coordinate, exhaustive } from '../../src/engine/sweep/strategies';
import type { SweepResult } from '../../src/protocol';

const ROOT = path.resolve(__dirname, '..', '..', '..');

type Row = (name: string, value: string, target: string, ok: boolean | null) => void;

/** Recorded GPU sweeps: each replayed through both strategies with its medians as the objective. */
export async function replayRecordedSweeps(row: Row): Promise<number> {
  const dir = path.join(ROOT, 'test', 'fixtures', 'sweep');
  const files = fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter(f => /^gpu-.*\.json$/.test(f))
        .sort()
    : [];
  const recorded = files.map(f => ({ f, rec: loadResult(path.join(dir, f)) }));
  for (const { f, rec } of recorded) {
    if (rec.strategy !== 'exhaustive') {
      // A live search on the GPU: compare with the live exhaustive sweep of the same loops, when recorded.
      const ex = recorded.find(
        x =>
          x.rec.strategy === 'exhaustive' &&
          x.rec.kernel === rec.kernel &&
          x.rec.gpu === rec.gpu &&
          x.rec.loops.map(l => l.line).join() === rec.loops.map(l => l.line).join(),
      )?.rec;
      const best = rec.variants.find(v => v.id === rec.best);
      const exBest = ex?.variants.find(v => v.id === ex.best);
      const inEx = ex?.variants.find(v => v.id === rec.best);
      const gap = inEx?.medianMs != null && exBest?.medianMs != null ? inEx.medianMs / exBest.medianMs - 1 : null;
      row(
        `recorded ${rec.strategy} run ${f}`,
        `${rec.evaluations} evaluations${ex ? ` (exhaustive: ${ex.evaluations})` : ''}, best ${best?.label ?? '-'}` +
          `${ex ? `; exhaustive best ${exBest?.label ?? '-'}; its median in the exhaustive run ${gap === null ? '-' : `${(gap * 100).toFixed(1)}% from the best`}` : ''}`,
        'within 5% of the exhaustive best',
        gap === null ? null : gap <= 0.05,
      );
      continue;
    }
    const ex = await replaySweep(rec, exhaustive, 'median');
    const co = await replaySweep(rec, coordinate, 'median');
    const pct = (g: number | null) => (g === null ? '-' : `${(g * 100).toFixed(1)}%`);
    row(
      `replay ${f} (${rec.kernel}, ${rec.gpu ?? 'GPU'}): exhaustive`,
      `${ex.evaluations} evaluations, best ${ex.bestId} ${ex.bestMedian?.toFixed(4)} ms`,
      '',
      null,
    );
    row(
      `replay ${f}: coordinate`,
      `${co.evaluations} evaluations, best ${co.bestId} ${co.bestMedian?.toFixed(4)} ms, gap ${pct(co.gap)}`,
      'gap ≤ 5%',
      co.gap !== null && co.gap <= 0.05,
    );
  }
  return recorded.filter(x => x.rec.strategy === 'exhaustive').length;
}

async function staticSweeps(row: Row): Promise<void> {
  const t = await detectToolchain({ probeGpu: false });
  const docs = await CudaDocuments.create();
  const file = path.join(ROOT, 'cuda-samples', 'matvec.cu');
  const text = fs.readFileSync(file, 'utf8');
  const analysis = docs.analyzeOnce(text, file);
  const base = {
    file,
    text,
    analysis,
    toolchain: t,
    arch: 'sm_90',
    flags: flagsFromSettings({}, path.dirname(file)),
    kernel: 'matvec_warp_per_row',
  };
  const results: Record<string, SweepResult> = {};
  for (const strategy of ['coordinate', 'exhaustive']) {
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bench-sweep-'));
    const t0 = performance.now();
    const r = await runSweep({ ...base, cacheDir, strategy });
    const ms = performance.now() - t0;
    results[strategy] = r;
    const best = r.variants.find(v => v.id === r.best);
    row(
      `static sweep matvec_warp_per_row, 2 loops × 7 factors (${r.spaceSize} points), ${strategy}`,
      `${r.evaluations} variants built in ${(ms / 1000).toFixed(1)} s, best ${best?.label ?? '-'}`,
      '',
      null,
    );
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
  // Equal by the rule, not by id: points with the same code tie (e.g. `full` on a loop nvcc unrolls completely anyway).
  const scoreIn = (r: SweepResult, id: string | null) => {
    const v = r.variants.find(x => x.id === id);
    return v ? staticScore(v, r.variants.find(x => x.id === r.baseline) ?? null, staticRuleOf(r)) : null;
  };
  const same = scoreIn(results.coordinate, results.coordinate.best) === scoreIn(results.exhaustive, results.exhaustive.best);
  row(
    'coordinate finds the exhaustive best (static rule)',
    `${same ? `yes (${results.coordinate.best} ≡ ${results.exhaustive.best})` : `no: ${results.coordinate.best} vs ${results.exhaustive.best}`}, ` +
      `${results.coordinate.evaluations} of ${results.exhaustive.evaluations} builds`,
    'equally good by the rule',
    same,
  );
  const replay = await replaySweep(results.exhaustive, coordinate, 'static');
  row(
    'replay of the static sweep through coordinate',
    `${replay.evaluations} evaluations, best ${replay.bestId} (rank ${replay.bestRank})`,
    'rank 1',
    replay.bestRank === 1,
  );
}

export async function sweepBench(row: Row): Promise<void> {
  const replayed = await replayRecordedSweeps(row);
  if (!replayed) row('recorded GPU sweeps (test/fixtures/sweep/gpu-*.json)', 'none recorded yet: static objective only', '', null);
  await staticSweeps(row);
}
