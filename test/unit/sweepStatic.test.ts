// A real static sweep: nvcc builds every point of matvec_warp_per_row's two loops × three
// factors; cuobjdump/nvdisasm read them back. Skips without nvcc outside CI, like variants.test.
import { pointsText } from '../../src/schema/sweepCounts';
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, lineOf, SAMPLES } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { runSweep, SweepOptions } from '../../src/engine/sweep/sweep';
import { sweepJson } from '../../src/engine/sweep/json';
import type { SweepResult } from '../../src/protocol';
import { UnrollFactors } from '../../src/engine/variants/factors';

let toolchain: Toolchain | null = null;
let skip: string | false = false;
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sweep-'));

before(async () => {
  try {
    toolchain = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
  if (toolchain && !toolchain.nvdisasm) {
    if (process.env.CI) throw new Error('nvdisasm missing: scripts/setup-cuda-tools.sh should have installed it');
    skip = 'no nvdisasm (run npm run setup:cuda-tools)';
  }
});

async function options(over: Partial<SweepOptions> = {}): Promise<SweepOptions> {
  const file = path.join(SAMPLES, 'matvec.cu');
  const text = fs.readFileSync(file, 'utf8');
  return {
    file,
    text,
    analysis: await analyze(text, file),
    toolchain: toolchain!,
    arch: 'sm_90',
    flags: flagsFromSettings({}, SAMPLES),
    cacheDir: CACHE,
    kernel: 'matvec_warp_per_row',
    factors: UnrollFactors.parse('default,4,full'),
    now: () => new Date('2026-11-23T10:00:00Z'),
    ...over,
  };
}

describe('static sweep with nvcc (matvec_warp_per_row: 2 loops × default,4,full)', () => {
  let r: SweepResult;
  const partial: SweepResult[] = [];
  let c = 0;
  let s = 0;

  test('every point built and measured per loop; identical code found where nvcc ignores the request', async t => {
    if (skip) return t.skip(skip);
    const o = await options();
    c = lineOf(o.text, 'for (int c = lane; c < cols; c += WARP)');
    s = lineOf(o.text, 'for (int off = 16; off > 0; off >>= 1)');
    const progress: string[] = [];
    r = await runSweep(o, { onVariant: (_v, p) => partial.push(p), onProgress: p => progress.push(p.message) });
    assert.equal(r.complete, true);
    assert.equal(r.spaceSize, 9);
    assert.equal(r.evaluations, 10);
    assert.equal(r.static, true);
    assert.equal(r.origin, 'sweep');
    assert.equal(r.createdAt, '2026-11-23T10:00:00.000Z');
    assert.deepEqual(
      r.loops.map(l => [l.line, l.written, l.tripCount, l.pragma]),
      [
        [c, 'default', 'runtime', null],
        [s, 'full', 5, 'unroll'],
      ],
    );
    assert.equal(r.variants[0].id, 'as-written');
    assert.ok(r.variants.every(v => v.status === 'ok' && v.kernel === '_Z19matvec_warp_per_rowPKfS0_Pfii'));
    const v = (id: string) => r.variants.find(x => x.id === id)!;
    // as written: nvcc unrolls the runtime-count loop ×16 and the 5-trip shuffle loop completely
    assert.deepEqual(v('as-written').effectiveUnroll, { [c]: 16, [s]: 5 });
    assert.equal(v('as-written').fullyUnrolled[s], true);
    // default on an unpragma'd loop and `#pragma unroll` kept: the file as written, same code
    assert.equal(v(`${c}=default,${s}=full`).identicalTo, 'as-written');
    // `full` on a runtime trip count: nvcc unrolls ×4, the same code as unroll 4
    assert.equal(v(`${c}=full,${s}=default`).identicalTo, `${c}=4,${s}=default`);
    assert.equal(v(`${c}=4,${s}=4`).effectiveUnroll[c], 4);
    assert.equal(v(`${c}=full,${s}=4`).fullyUnrolled[c], false);
    // nvcc already unrolls the 5-trip loop completely by default: full changes nothing
    assert.equal(v(`${c}=4,${s}=full`).identicalTo, `${c}=4,${s}=default`);
    assert.equal(v(`${c}=default,${s}=4`).identicalTo, null);
    assert.equal(v(`${c}=default,${s}=4`).effectiveUnroll[s], 4);
    // instructions follow the unroll; registers and occupancy are measured
    assert.ok(v(`${c}=4,${s}=default`).kernelInstructions! < v('as-written').kernelInstructions!);
    assert.ok(v(`${c}=4,${s}=default`).loopInstructions[c]! < v('as-written').loopInstructions[c]!);
    assert.ok(
      r.variants.every(x => x.registers! > 0 && x.occupancy! > 0 && x.occupancy! <= 1 && x.kernelBytes === x.kernelInstructions! * 16),
    );
    assert.ok(r.variants.every(x => x.samples === 0 && x.medianMs === null && x.speedup === null));
    // static rule: most unrolling within the budgets; ties to fewer instructions → as written (×16 · ×5)
    assert.equal(r.best, 'as-written');
    assert.match(r.bestBasis!, /unrolled most.*fewer kernel instructions/);
    assert.equal(r.icacheBudgetBytes, 49920);
    assert.ok(
      r.notes.some(n => /6 of 10 variants have the same machine code/.test(n)),
      r.notes.join('\n'),
    );
    // live updates: one snapshot per variant, none complete, the last one equal to the result but for that
    assert.equal(partial.length, 10);
    assert.ok(partial.every((p, i) => !p.complete && p.variants.length === i + 1));
    assert.ok(
      progress.some(m => /^\[\d+\/\d+\] L\d+ ×4 · L\d+ full: done \(same machine code as/.test(m)),
      progress.join('\n'),
    );
  });

  test('sweep --json: documented shape, identicalTo as the factors object in a multi-loop sweep', t => {
    if (skip || !r) return t.skip(skip || 'needs the sweep above');
    const j = sweepJson(r);
    assert.deepEqual(Object.keys(j).slice(0, 5), ['kernel', 'static', 'variants', 'best', 'evaluations']);
    assert.equal(j.kernel, 'matvec_warp_per_row');
    assert.equal(j.static, true);
    assert.equal(j.evaluations, 10);
    const x = j.variants.find(v => v.id === `${c}=full,${s}=default`)!;
    assert.deepEqual(Object.keys(x).slice(0, 12), [
      'factors',
      'params',
      'status',
      'kernelInstructions',
      'loopInstructions',
      'registers',
      'identicalTo',
      'samples',
      'medianMs',
      'iqrMs',
      'speedup',
      'stallShare',
    ]);
    assert.deepEqual(x.factors, { [c]: 'full', [s]: 'default' });
    assert.deepEqual(x.identicalTo, { [c]: 4, [s]: 'default' });
    assert.deepEqual(j.variants.find(v => v.id === `${c}=default,${s}=full`)!.identicalTo, {});
    assert.equal(x.medianMs, null);
    assert.equal(typeof x.loopInstructions[String(c)], 'number');
    assert.equal(j.best!.id, 'as-written');
    assert.doesNotThrow(() => JSON.parse(JSON.stringify(j)));
  });

  test('coordinate strategy: fewer builds, same best as the exhaustive sweep', async t => {
    if (skip || !r) return t.skip(skip || 'needs the sweep above');
    const s2 = await runSweep(await options({ strategy: 'coordinate' }));
    assert.equal(s2.strategy, 'coordinate');
    assert.ok(s2.evaluations < r.evaluations, `${s2.evaluations} vs ${r.evaluations}`);
    assert.equal(s2.best, r.best);
    assert.match(pointsText(s2), /^\d+ of 9 points \+ the file as written$/);
    assert.ok(!s2.notes.some(n => /points evaluated/.test(n)), 'the count is said once, in the header');
  });

  // A small file of its own: quick builds, and a kernel whose code depends on the macro.
  const TINY = `#ifndef BLOCK
#define BLOCK 32
#endif
static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32");
__global__ void tiny(float* a, int n) {
  for (int i = threadIdx.x; i < n; i += BLOCK) a[i] *= 2.0f;
  float s = 0.0f;
  for (int k = 0; k < BLOCK / 8; ++k) s += a[k];
  a[0] = s;
}
`;
  const made: string[] = [];
  after(() => made.forEach(d => fs.rmSync(d, { recursive: true, force: true })));
  async function tiny(over: Partial<SweepOptions>): Promise<SweepOptions> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sweep-tiny-'));
    made.push(dir);
    const file = path.join(dir, 'tiny.cu');
    fs.writeFileSync(file, TINY);
    return {
      ...(await options()),
      file,
      text: TINY,
      analysis: await analyze(TINY, file),
      kernel: 'tiny',
      flags: flagsFromSettings({}, dir),
      cacheDir: dir,
      ...over,
    };
  }

  test('cancel: what finished comes back, complete false, nothing half-measured', async t => {
    if (skip) return t.skip(skip);
    const ac = new AbortController();
    const got = await runSweep(await tiny({ signal: ac.signal, factors: UnrollFactors.parse('default,1,2'), jobs: 1 }), {
      onVariant: v => {
        if (v.id !== 'as-written') ac.abort();
      },
    });
    assert.equal(got.complete, false);
    assert.ok(got.variants.length >= 2 && got.variants.length < 10, `${got.variants.length} variants`);
    assert.ok(got.variants.every(v => v.status === 'ok' && v.kernelInstructions !== null));
    assert.equal(got.evaluations, got.variants.length);
    assert.ok(got.notes.some(n => /^cancelled/.test(n)));
  });

  test('a -D parameter axis: the macro reaches nvcc per point; a rejected value fails that point only', async t => {
    if (skip) return t.skip(skip);
    const o = await tiny({ factors: UnrollFactors.parse('1'), params: { BLOCK: ['32', '64', '48'] } });
    const k = lineOf(TINY, 'int k = 0');
    const p = await runSweep({ ...o, loops: [k] });
    assert.equal(p.spaceSize, 3);
    assert.deepEqual(p.params, { BLOCK: ['32', '64', '48'] });
    const v = (b: string) => p.variants.find(x => x.id === `${k}=1|BLOCK=${b}`)!;
    assert.equal(v('32').status, 'ok');
    assert.equal(v('64').status, 'ok');
    // the trip count BLOCK / 8 follows the macro: more loads with BLOCK=64, full unroll either way
    assert.notEqual(v('64').identicalTo, v('32').id);
    assert.equal(v('48').status, 'compile');
    assert.match(v('48').message!, /BLOCK must be a multiple of 32/);
    assert.equal(p.best, 'as-written', 'nvcc unrolls the constant-trip loop completely as written');
  });
});
