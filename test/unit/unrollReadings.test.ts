// Applied unroll from two machine-code readings that must agree (issue 40): the copies of one
// iteration's arithmetic in the loop body, and the induction steps per pass against the rolled
// loop's. On golden nvdisasm listings of test/fixtures/unroll-shapes/vectorised.cu's tile_product<32>
// `k` loop (the shape of NVIDIA's matrixMul sample; test/fixtures/sass/vectorised/regenerate.sh),
// where nvcc merges the reads of As[ty][k] into LDS.64 / LDS.128, so counting loads says ×2 for ×4.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseNvdisasm } from '../../src/engine/sass/nvdisasm';
import { findSassLoops } from '../../src/engine/sass';
import type { SassFunction } from '../../src/engine/sass';
import { inductionSteps, stepRatio } from '../../src/engine/sass/induction';
import { appliedUnroll } from '../../src/engine/variants/appliedUnroll';
import { explainVariants } from '../../src/engine/variants/variantNotes';
import type { LoopVariant } from '../../src/engine/variants/reports';
import type { Loop } from '../../src/engine/parse/model';
import { analyze, kernel, loopAt, REPO_ROOT } from './helpers';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sass', 'vectorised');
const SOURCE = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'unroll-shapes', 'vectorised.cu'), 'utf8');
/** The path the fixtures' line table names (regenerate.sh rewrites its temporary folder to this). */
const RECORDED_FILE = '/work/test/fixtures/unroll-shapes/vectorised.cu';
const DEMANGLED = 'void tile_product<32>(float*, float const*, float const*, int, int)';

function fn(variant: string): SassFunction {
  const listing = parseNvdisasm(fs.readFileSync(path.join(FIXTURES, `tile_product.${variant}.nvdisasm-c-gi.txt`), 'utf8'));
  assert.equal(listing.functions.length, 1);
  return listing.functions[0];
}

async function kLoop() {
  const a = await analyze(SOURCE, RECORDED_FILE);
  const k = kernel(a, 'tile_product');
  return { k, loop: loopAt(k, 21) };
}

/** The innermost machine loop (the `k` loop when it is left). */
function innermost(f: SassFunction) {
  const loops = findSassLoops(f);
  return loops.reduce((a, b) => (b.depth > a.depth ? b : a));
}

describe('the matrixMul-shaped k loop: merged loads do not decide the count', () => {
  test('the trap: the loads of four iterations are fewer than four times one iteration’s', () => {
    const lds = (f: SassFunction) => {
      const l = innermost(f);
      return f.instructions.filter(i => i.address >= l.headAddress && i.address <= l.branchAddress && i.opcode === 'LDS').length;
    };
    assert.equal(lds(fn('unroll1')), 2);
    // 4 LDS of Bs[k][tx] and two LDS.64 for As[ty][k..k+3]: 6 loads, ratio 3, not 4 (the old ×2)
    assert.equal(lds(fn('unroll4')), 6);
  });

  for (const f of [4, 8, 16]) {
    test(`unroll ${f}: the body holds ×${f} of the FFMA and the induction steps grew ×${f}: ×${f}`, async () => {
      const { k, loop } = await kLoop();
      const a = appliedUnroll(fn(`unroll${f}`), fn('unroll1'), RECORDED_FILE, k, loop, DEMANGLED);
      assert.equal(a.copies, f);
      assert.equal(a.unknown, null);
      assert.equal(a.readings.body, f);
      assert.equal(a.readings.steps, f);
      assert.equal(a.fullyUnrolled, false);
    });
  }

  test('full unroll: no machine loop of its own left, trip 32, and 32 copies of the FFMA per pass of the tile loop', async () => {
    const { k, loop } = await kLoop();
    const a = appliedUnroll(fn('full'), fn('unroll1'), RECORDED_FILE, k, loop, DEMANGLED);
    assert.equal(a.fullyUnrolled, true);
    assert.equal(a.copies, 32);
    assert.equal(a.readings.body, 32);
  });

  test('induction steps per pass: the As and Bs pointers move 4 and 0x80 bytes rolled, 8× that at unroll 8', () => {
    const rolled = fn('unroll1');
    const unrolled = fn('unroll8');
    const r = inductionSteps(rolled, innermost(rolled), findSassLoops(rolled));
    const u = inductionSteps(unrolled, innermost(unrolled), findSassLoops(unrolled));
    assert.ok(r.includes(0x4) && r.includes(0x80), `rolled steps ${r}`);
    assert.ok(u.includes(0x20) && u.includes(0x400), `unrolled steps ${u}`);
    assert.equal(stepRatio(u, r).factor, 8);
  });

  test('readings that disagree give no number but the reason (steps halved by hand in the ×8 listing)', async () => {
    const { k, loop } = await kLoop();
    const f8 = fn('unroll8');
    const l = innermost(f8);
    // Make every self-add of the ×8 loop move half as far: the steps now say ×4, the body still ×8.
    const halved: SassFunction = {
      ...f8,
      instructions: f8.instructions.map(i => {
        if (i.address < l.headAddress || i.address > l.branchAddress || !['IADD3', 'VIADD'].includes(i.opcode)) return i;
        return { ...i, operands: i.operands.replace(/0x([0-9a-f]+)/, (_m, h: string) => `0x${(parseInt(h, 16) / 2).toString(16)}`) };
      }),
    };
    const a = appliedUnroll(halved, fn('unroll1'), RECORDED_FILE, k, loop, DEMANGLED);
    assert.equal(a.copies, null);
    assert.equal(a.readings.body, 8);
    assert.equal(a.readings.steps, 4);
    assert.match(a.unknown ?? '', /disagree: the body holds ×8 .* say ×4/);
  });
});

describe('stepRatio', () => {
  test('the factor that explains the steps; none, or two that explain them equally, give null and why', () => {
    assert.equal(stepRatio([4, 16], [1, 4]).factor, 4);
    assert.equal(stepRatio([1, 4], [1, 4]).factor, 1);
    assert.deepEqual(stepRatio([], [1]), { factor: null, reason: 'no constant induction step in the unrolled machine loop' });
    // {4} against {1, 4}: ×4 (the counter) or ×1 (the pointer) explain it equally
    assert.equal(stepRatio([4], [1, 4]).factor, null);
    assert.match(stepRatio([4], [1, 4]).reason, /more than one factor/);
    assert.equal(stepRatio([6], [4]).factor, null);
  });
});

describe('notes: "capped" only when both readings say so', () => {
  const loop = { tripCount: 'runtime' } as unknown as Loop;
  const v = (factor: number, effectiveUnroll: number | null, steps: number | null, unknown: string | null = null): LoopVariant =>
    ({
      factor,
      status: 'ok',
      effectiveUnroll,
      fullyUnrolled: false,
      identicalTo: null,
      unrollUnknown: unknown,
      unrollReadings: {
        body: effectiveUnroll,
        steps,
        stepsBasis: steps === null ? 'no constant induction step in the rolled machine loop' : 'x',
      },
    }) as unknown as LoopVariant;
  test('both readings ×4 for unroll 8: capped', () => {
    assert.deepEqual(explainVariants([v(8, 4, 4)], loop), ['unroll 8 requested, nvcc unrolled ×4 (capped)']);
  });
  test('the body alone: said as the body’s count, no "capped"', () => {
    const [note] = explainVariants([v(8, 4, null)], loop);
    assert.doesNotMatch(note, /capped/);
    assert.match(note, /body holds ×4 \(not confirmed by its induction steps: no constant induction step/);
  });
  test('readings that disagree: "unknown" with the reason, nothing about the request', () => {
    assert.deepEqual(explainVariants([v(4, null, 2, 'the machine readings disagree: …')], loop), [
      'unroll 4: applied unroll unknown: the machine readings disagree: …',
    ]);
  });
});
