// Unit tests of the SASS-level stall samples (src/engine/profile/sassStalls.ts) on real ncu source
// pages (test/fixtures/ncu, README.md there). listing/ holds listings and source pages of one
// build, so the pages sample the machine code the listings show. Expected numbers were computed
// from the CSV files with Python's csv module (rows with an address, each address once: count,
// sum of "Warp Stall Sampling (All Samples)", the row with most samples), not with the code under test.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseSourcePage } from '../../src/engine/profile/ncuCsv';
import { perLineStalls } from '../../src/engine/profile/stalls';
import {
  attachSassStalls,
  kernelMatches,
  ListedInstruction,
  normaliseSassText,
  readSassStallsFile,
  SassStalls,
  sassStallsOf,
} from '../../src/engine/profile/sassStalls';
import { parseCuobjdumpSass, parseNvdisasm, SassInstruction } from '../../src/engine/sass';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'ncu');
const file = (rel: string) => path.join(FIXTURES, rel);
const page = (rel: string) => parseSourcePage(fs.readFileSync(file(rel), 'utf8'));

const LINEAR = 'linear-unroll-inner-full.source-cuda-sass.csv';
const LINEAR_MANGLED = '_Z6linearILi1ELi0EEvPKfS1_S1_Pf';
const ACC = '_Z10accumulatePfii';

function checkShape(s: SassStalls, count: number, total: number) {
  assert.equal(s.instructions.length, count);
  s.instructions.forEach((i, n) => assert.equal(i.offset, n * 16, `instruction ${n} at ${i.offset}`));
  assert.equal(s.totalSamples, total);
  assert.equal(
    s.instructions.reduce((a, i) => a + i.samples, 0),
    total,
  );
  for (const i of s.instructions) {
    const reasons = Object.values(i.stalls).reduce((a, b) => a + b, 0);
    assert.equal(reasons, i.samples, `reasons of ${i.text} at ${i.offset}`);
  }
}

/** A listed instruction as the listing shows it: predicate, opcode.modifiers and operands. */
const listed = (i: SassInstruction, withTarget: boolean): ListedInstruction => ({
  offset: i.address,
  text: [i.predicate, [i.opcode, ...i.modifiers].join('.'), i.operands].filter(Boolean).join(' '),
  ...(withTarget && i.target !== undefined ? { target: i.target } : {}),
});

describe('sassStallsOf', () => {
  test('the cuda,sass page of linear<1,0>: 568 instructions at 0, 16, …, 226 samples, the per-line total', () => {
    const p = page(LINEAR);
    const s = sassStallsOf(p, LINEAR_MANGLED)!;
    assert.equal(s.kernel, 'void linear<(int)1, (int)0>(const float *, const float *, const float *, float *)');
    assert.equal(s.factor, 'as-written');
    checkShape(s, 568, 226);
    // one source file, each instruction on one line: the per-line sums add up to the same samples
    assert.equal(
      perLineStalls(p).reduce((a, l) => a + l.samples, 0),
      226,
    );
    const hottest = [...s.instructions].sort((a, b) => b.samples - a.samples)[0];
    assert.deepEqual([hottest.offset, hottest.text, hottest.samples], [0x1080, 'FFMA R5, R21, R6, R20', 21]);
    // branch targets inside the function are offsets, as cuobjdump prints them
    assert.equal(s.instructions.find(i => i.offset === 0x210)!.text, '@P0 BRA 0x850');
    assert.equal(s.instructions.find(i => i.offset === 0x22a0)!.text, 'BRA 0x22a0');
  });

  test('a kernel in two files (inlined header): blocks merged by address, each instruction once; the same as the sass page', () => {
    const both = sassStallsOf(page('mini/mini-source-cuda-sass.accumulate.stdout.txt'), ACC)!;
    const sass = sassStallsOf(page('mini/mini-source-sass.accumulate.stdout.txt'), ACC)!;
    checkShape(both, 176, 5221);
    assert.deepEqual(both, sass);
    // the per-line sums count the instruction at 0x1c0 (2884 samples) on mini.cu:28 and mini_helper.cuh:5
    const perLine = perLineStalls(page('mini/mini-source-cuda-sass.accumulate.stdout.txt'));
    assert.equal(
      perLine.reduce((a, l) => a + l.samples, 0),
      5221 + 2884,
    );
    assert.equal(both.instructions[0x1c0 / 16].samples, 2884);
  });

  test('the bench fixture (matmul_basic) and the listing fixtures', () => {
    const m = sassStallsOf(page('../gpu/h100/source-stalls/reports/matmul_unroll-source.csv'), '_Z12matmul_basicPKfS0_Pfi')!;
    assert.equal(m.kernel, 'matmul_basic(const float *, const float *, float *, int)');
    checkShape(m, 216, 6814);
    const a = sassStallsOf(page('listing/mini-accumulate.source-sass.csv'), ACC, '4')!;
    const b = sassStallsOf(page('listing/mini-accumulate.source-cuda-sass.csv'), ACC, '4')!;
    checkShape(a, 176, 5212);
    assert.equal(a.factor, '4');
    assert.deepEqual(a, b);
  });

  test('no SASS rows: a cuda-only page and an empty page give null', () => {
    assert.equal(sassStallsOf(page('mini/mini-source-cuda.stdout.txt')), null);
    assert.equal(sassStallsOf(parseSourcePage('')), null);
  });

  test('kernel names: mangled by source name and integer template arguments, else a substring', () => {
    const name = 'void linear<(int)1, (int)0>(const float *, const float *, const float *, float *)';
    assert.ok(kernelMatches(name, LINEAR_MANGLED));
    assert.ok(!kernelMatches(name, '_Z6linearILi0ELi1EEvPKfS1_S1_Pf'));
    assert.ok(!kernelMatches(name, '_Z7linear2ILi1ELi0EEvPKfS1_S1_Pf'));
    assert.ok(kernelMatches(name, 'linear<(int)1'));
    assert.ok(kernelMatches('accumulate(float *, int, int)', ACC));
    assert.ok(kernelMatches('matmul_basic(const float *, const float *, float *, int)', '_Z12matmul_basicPKfS0_Pfi'));
    assert.ok(!kernelMatches('matmul_basic(const float *, const float *, float *, int)', '_Z10mm_defaultPKfS0_Pfi'));
    assert.ok(kernelMatches('void ns::k<(int)-3, true>(float *)', '_ZN2ns1kILin3ELb1EEEvPf'));
    assert.ok(!kernelMatches('void ns::k<(int)-3, false>(float *)', '_ZN2ns1kILin3ELb1EEEvPf'));
    // no kernel of that name: the one with most samples
    assert.equal(sassStallsOf(page(LINEAR), '_Z5otherv')!.totalSamples, 226);
  });
});

describe('attachSassStalls', () => {
  const stalls = sassStallsOf(page('listing/mini-accumulate.source-sass.csv'), ACC)!;
  const nvdisasm = parseNvdisasm(fs.readFileSync(file('listing/mini.nvdisasm-c-g.txt'), 'utf8')).functions.find(f => f.name === ACC)!;
  const cuobjdump = parseCuobjdumpSass(fs.readFileSync(file('listing/mini.accumulate.cuobjdump-sass.txt'), 'utf8')).functions.find(
    f => f.name === ACC,
  )!;

  test('the same build: nvdisasm (labels resolved or not) and cuobjdump listings match', () => {
    for (const [what, list] of [
      ['nvdisasm, targets', nvdisasm.instructions.map(i => listed(i, true))],
      ['nvdisasm, bare labels', nvdisasm.instructions.map(i => listed(i, false))],
      ['cuobjdump', cuobjdump.instructions.map(i => listed(i, false))],
    ] as const) {
      const r = attachSassStalls(list, stalls);
      assert.equal(r.matched, true, what);
      assert.equal(r.note, null, what);
      assert.equal(r.byOffset.size, stalls.instructions.filter(i => i.samples > 0).length, what);
      const hot = r.byOffset.get(0x1c0)!;
      assert.equal(hot.samples, 3541);
      assert.ok(Math.abs(hot.share - 3541 / 5212) < 1e-12);
      assert.deepEqual(
        hot.top.map(t => t.reason),
        ['not_selected', 'math_pipe_throttle', 'no_instruction'],
      );
      const src = stalls.instructions[0x1c0 / 16].stalls;
      hot.top.forEach(t => assert.ok(Math.abs(t.share - src[t.reason] / 3541) < 1e-12));
      const shareSum = [...r.byOffset.values()].reduce((a, s) => a + s.share, 0);
      assert.ok(Math.abs(shareSum - 1) < 1e-9);
    }
  });

  test('a listing built from the page rows matches; one with an instruction fewer or another kernel does not', () => {
    const fromRows = stalls.instructions.map(i => ({ offset: i.offset, text: `  ${i.text.replace(/ /g, '   ')} ;` }));
    assert.equal(attachSassStalls(fromRows, stalls).matched, true);

    const shorter = attachSassStalls(fromRows.slice(0, -1), stalls);
    assert.equal(shorter.matched, false);
    assert.equal(shorter.byOffset.size, 0);
    assert.equal(shorter.note, 'the GPU run sampled different machine code (176 vs 175 instructions) — re-run the benchmark');

    const edited = fromRows.map(i => (i.offset === 0x1c0 ? { ...i, text: 'ULOP3.LUT UR8, UR4, 0x8, URZ, 0xc0, !UPT' } : i));
    const r = attachSassStalls(edited, stalls);
    assert.equal(r.matched, false);
    assert.match(r.note!, /different machine code \(at 0x01c0: ULOP3\.LUT UR8, UR4, 0x4, .* vs ULOP3\.LUT UR8, UR4, 0x8, /);

    // a label resolved to the wrong target is different code
    const wrongTarget = nvdisasm.instructions
      .map(i => listed(i, true))
      .map(i => (i.target !== undefined ? { ...i, target: i.target + 16 } : i));
    assert.equal(attachSassStalls(wrongTarget, stalls).matched, false);

    // the scale<16> kernel of the same build
    const other = parseNvdisasm(fs.readFileSync(file('listing/mini.nvdisasm-c-g.txt'), 'utf8')).functions.find(f => f.name !== ACC)!;
    const o = attachSassStalls(
      other.instructions.map(i => listed(i, true)),
      stalls,
    );
    assert.equal(o.matched, false);
    assert.match(o.note!, /re-run the benchmark/);
  });

  test('another program with as many instructions: the first differing instruction is named', () => {
    // the bench fixture's matmul_basic (216 instructions) against mm_default of test/fixtures/sass/matmul (also 216)
    const page216 = sassStallsOf(page('../gpu/h100/source-stalls/reports/matmul_unroll-source.csv'))!;
    const mm = parseNvdisasm(fs.readFileSync(path.join(FIXTURES, '..', 'sass', 'matmul.nvdisasm-c-g.txt'), 'utf8')).functions.find(
      f => f.name === '_Z10mm_defaultPKfS0_Pfi',
    )!;
    assert.equal(mm.instructions.length, 216);
    const r = attachSassStalls(
      mm.instructions.map(i => listed(i, true)),
      page216,
    );
    assert.equal(r.matched, false);
    assert.equal(
      r.note,
      'the GPU run sampled different machine code (at 0x0010: S2R R5, SR_CTAID.Y vs S2R R3, SR_CTAID.X) — re-run the benchmark',
    );
  });

  test('operand reuse flags, which ncu does not print, are no difference', () => {
    // as nvdisasm prints them (line 41 of listing/mini.nvdisasm-c-g.txt, in scale<16>)
    assert.equal(normaliseSassText('IADD3 R4, R8.reuse, -0x1, RZ ;'), 'IADD3 R4, R8, -0x1, RZ');
    const withReuse = nvdisasm.instructions
      .map(i => listed(i, true))
      .map(i => (i.text === 'IMAD R5, R5, UR4, R0' ? { ...i, text: 'IMAD R5, R5.reuse, UR4, R0' } : i));
    assert.ok(withReuse.some(i => i.text.includes('.reuse')));
    assert.equal(attachSassStalls(withReuse, stalls).matched, true);
  });

  test('a run without samples attaches nothing and says so', () => {
    const none: SassStalls = { ...stalls, totalSamples: 0, instructions: stalls.instructions.map(i => ({ ...i, samples: 0, stalls: {} })) };
    const r = attachSassStalls(
      nvdisasm.instructions.map(i => listed(i, true)),
      none,
    );
    assert.equal(r.matched, true);
    assert.equal(r.byOffset.size, 0);
    assert.match(r.note!, /no stall samples/);
  });
});

describe('readSassStallsFile', () => {
  test('a saved sass page gives what parsing it gives, factor unknown', () => {
    const s = readSassStallsFile(file('listing/mini-accumulate.source-sass.csv'), ACC);
    assert.deepEqual(s, { ...sassStallsOf(page('listing/mini-accumulate.source-sass.csv'), ACC)!, factor: null });
    // one kernel in the page: taken whatever the name
    assert.equal(readSassStallsFile(file('listing/mini-accumulate.source-cuda-sass.csv'), '_Z5otherv').totalSamples, 5212);
  });

  test('not a source page, a cuda-only page, a missing file: clear errors', () => {
    assert.throws(
      () => readSassStallsFile(file(LINEAR.replace('source-cuda-sass', 'raw')), ACC),
      /is not an ncu source page with SASS instructions.*--print-source sass/,
    );
    assert.throws(() => readSassStallsFile(file('mini/mini-source-cuda.stdout.txt'), ACC), /is not an ncu source page with SASS/);
    assert.throws(
      () => readSassStallsFile(path.join(os.tmpdir(), 'no-such-unroll-lens-page.csv'), ACC),
      /cannot read the stall samples file/,
    );
  });

  test('several kernels and none named: an error listing them', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sass-stalls-'));
    const two = path.join(dir, 'two.csv');
    // two real pages one after the other: two kernels
    fs.writeFileSync(two, fs.readFileSync(file(LINEAR), 'utf8') + fs.readFileSync(file('listing/mini-accumulate.source-sass.csv'), 'utf8'));
    assert.throws(
      () => readSassStallsFile(two, '_Z5otherv'),
      /has no kernel matching _Z5otherv; it has: void linear<.*; accumulate\(float \*, int, int\)$/,
    );
    assert.equal(readSassStallsFile(two, LINEAR_MANGLED).totalSamples, 226);
    assert.equal(readSassStallsFile(two, ACC).totalSamples, 5212);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
