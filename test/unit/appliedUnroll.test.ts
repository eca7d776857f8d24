// Applied unroll from the machine code's loop structure (issue 22): `unroll-lens sass --loop L
// --factors … --json` on the fixture loops of test/fixtures/unroll-shapes/*.cu (constant and
// runtime trips, factors that do not divide the trip count, nested pragmas, template
// instantiations, requests nvcc does not honour, integer bodies, register arrays) against what the
// independent checker (scripts/check-applied-unroll.py, no code of ours) counted in the same
// builds: the copies of one iteration per pass of the main machine loop, whether no machine loop
// is left, and the remainder beside it. expected.json is the checker's --json output;
// checker-output.txt its table (both regenerated with
// `python3 scripts/check-applied-unroll.py --no-samples --json test/fixtures/unroll-shapes/expected.json`).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { copiesOf } from '../../src/engine/variants/appliedUnroll';
import { explainVariants } from '../../src/engine/variants/variantNotes';
import type { LoopVariant } from '../../src/engine/variants/reports';
import type { Loop } from '../../src/engine/parse/model';
import { REPO_ROOT, useCudaTools } from './helpers';

interface Expected {
  loop: string;
  file: string;
  line: number;
  factor: string;
  kernel: string | null;
  effectiveUnroll: number;
  fullyUnrolled: boolean;
  remainder: { loops: number[]; straight: number } | null;
}

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'unroll-shapes');
const EXPECTED: Expected[] = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8'));

async function runCli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: x => (stdout += x), err: x => (stderr += x), isTTY: false });
  return { code, stdout, stderr };
}

describe('copiesOf: copies of one iteration from per-(opcode, line) counts', () => {
  test('work that unrolling folds away does not pull the count down (the icache_ilp ×51 bug)', () => {
    // One rolled iteration: 4 data FFMAs (lines 66–69) and the step's own FFMA and FMUL (line 51),
    // which become constants once unrolled.
    const per = new Map([
      ['FFMA.@66', 1],
      ['FFMA.@67', 1],
      ['FFMA.@68', 1],
      ['FFMA.@69', 1],
      ['FFMA.@51', 1],
      ['FMUL.@51', 1],
    ]);
    const unrolled = new Map([
      ['FFMA.@66', 64],
      ['FFMA.@67', 64],
      ['FFMA.@68', 64],
      ['FFMA.@69', 64],
    ]);
    assert.equal(copiesOf(per, unrolled), 64);
    assert.equal(copiesOf(per, per), 1);
    assert.equal(copiesOf(per, new Map()), 0);
  });

  test('the count most of the per-iteration work agrees on wins over a stray opcode', () => {
    const per = new Map([
      ['IMAD.@5', 1],
      ['LOP3.LUT@5', 1],
      ['SHF.R.U32.HI@5', 1],
      ['IADD3.@4', 1],
    ]);
    const counts = new Map([
      ['IMAD.@5', 8],
      ['LOP3.LUT@5', 8],
      ['SHF.R.U32.HI@5', 8],
      ['IADD3.@4', 1],
    ]);
    assert.equal(copiesOf(per, counts), 8);
  });

  test('a tie within the 15% window goes to the count the ratios round to exactly (inlined hash rounds ×8)', () => {
    // Recorded from scripts/device/recommend-kinds.cu icache_rounds at unroll 8 (nvcc 13.0, sm_90):
    // 16 inlined IMAD/SHF/LOP3 per iteration on lines 101-104 (one IMAD of line 101 moved out of
    // the rolled loop), and the loop line's counter adds: one per copy plus the step (ratio 9).
    const per = new Map<string, number>([['VIADD.@114', 1]]);
    const counts = new Map<string, number>([['VIADD.@114', 9]]);
    for (const line of [101, 102, 103, 104]) {
      for (const op of ['SHF.R.U32.HI', 'LOP3.LUT', 'IMAD.']) {
        per.set(`${op}@${line}`, op === 'IMAD.' && line === 101 ? 3 : 4);
        counts.set(`${op}@${line}`, 32);
      }
    }
    assert.equal(copiesOf(per, counts), 8);
  });

  test('a straight-line stretch with one recomputed instruction is no copy when a share is asked', () => {
    const per = new Map([
      ['IMAD.@5', 4],
      ['SHF.R.U32.HI@5', 4],
      ['LOP3.LUT@5', 4],
    ]);
    const oneImad = new Map([['IMAD.@5', 4]]);
    assert.equal(copiesOf(per, oneImad), 1);
    assert.equal(copiesOf(per, oneImad, 0.5), 0);
    assert.equal(copiesOf(per, per, 0.5), 1);
  });
});

describe('notes: capped and ignored only when the machine code shows it', () => {
  const loop = { tripCount: 'runtime' } as unknown as Loop;
  const v = (factor: number, effectiveUnroll: number, fullyUnrolled = false): LoopVariant =>
    ({ factor, status: 'ok', effectiveUnroll, fullyUnrolled, identicalTo: null }) as unknown as LoopVariant;
  test('honoured requests say nothing; ×1 is ignored; fewer copies are capped', () => {
    assert.deepEqual(explainVariants([v(1, 1), v(4, 4), v(64, 64)], loop), []);
    assert.deepEqual(explainVariants([v(4, 1)], loop), ['unroll 4 ignored by nvcc: its machine loop holds one iteration per pass (×1)']);
    assert.deepEqual(explainVariants([v(8, 4)], loop), ['unroll 8 requested, nvcc unrolled ×4 (capped)']);
  });
});

describe('applied unroll of the fixture loops against the independent checker (real nvcc and nvdisasm)', () => {
  const tools = useCudaTools(['nvdisasm']);
  // One CLI run per loop (all its factors), a few at a time.
  const groups = new Map<string, Expected[]>();
  for (const e of EXPECTED) {
    const key = `${e.file}:${e.line}:${e.kernel ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }

  test(`${EXPECTED.length} variants of ${groups.size} loops: effective unroll, full unroll and remainder as the checker counted`, async t => {
    if (tools.skip) return t.skip(tools.skip);
    assert.ok(groups.size >= 20, 'at least 20 loops');
    const mismatches: string[] = [];
    const queue = [...groups.values()];
    const worker = async () => {
      for (let g = queue.shift(); g; g = queue.shift()) {
        const first = g[0];
        const args = ['sass', path.join(REPO_ROOT, first.file), '--loop', String(first.line), '--arch', 'sm_90', '--json'];
        args.push('--factors', g.map(e => e.factor).join(','));
        if (first.kernel) args.push('--kernel', first.kernel);
        const r = await runCli(args);
        assert.equal(r.code, 0, `${first.loop}: ${r.stderr}`);
        const variants: { factor: string | number; effectiveUnroll: number | null; fullyUnrolled: boolean; remainder: unknown }[] =
          JSON.parse(r.stdout).loop.variants;
        for (const e of g) {
          const v = variants.find(x => String(x.factor) === e.factor);
          const got = v ? { effectiveUnroll: v.effectiveUnroll, fullyUnrolled: v.fullyUnrolled, remainder: v.remainder } : null;
          const want = { effectiveUnroll: e.effectiveUnroll, fullyUnrolled: e.fullyUnrolled, remainder: e.remainder };
          try {
            assert.deepEqual(got, want);
          } catch {
            mismatches.push(
              `${e.loop} (${e.file}:${e.line}) factor ${e.factor}: got ${JSON.stringify(got)}, checker ${JSON.stringify(want)}`,
            );
          }
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    assert.deepEqual(mismatches, []);
  });
});
