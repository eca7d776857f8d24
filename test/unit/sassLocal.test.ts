// Tests over test/fixtures/sass/local/ (saved by another tool: two dot-product kernels,
// `#pragma unroll 4` and `#pragma unroll 1`, for sm_75 / sm_80 / sm_90, compiled with nvcc 13.0
// and listed with cuobjdump / nvdisasm 12.4; see the README.md there). Skipped when the folder
// is absent. The ELF-size-vs-listing check over these files is in sassElf.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseCuobjdumpSass, parseResUsage } from '../../src/engine/sass/cuobjdump';
import { parseNvdisasm, outermostLocation } from '../../src/engine/sass/nvdisasm';
import { parsePtxasVerbose } from '../../src/engine/sass/ptxas';
import { readCubin } from '../../src/engine/sass/elf';
import { opcodeHistogram, classHistogram } from '../../src/engine/sass/histogram';
import { findSassLoops } from '../../src/engine/sass/loops';

const LOCAL = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'sass', 'local');
const has = (f: string): boolean => fs.existsSync(path.join(LOCAL, f));
const read = (f: string): string => fs.readFileSync(path.join(LOCAL, f), 'utf8');

const KERNEL = {
  unroll4: '_Z16dot_rows_unroll4PKfS0_Pfi',
  unroll1: '_Z16dot_rows_unroll1PKfS0_Pfi',
} as const;

// Backward branches, from `grep -o '/\*[0-9a-f]\{4\}\*/ *@\?!\?P\?[0-9]* *BRA [0-9a-fx]*'` over
// each cuobjdump listing (the last BRA of each, a branch to itself, is the end-of-code trap):
//   unroll1.sm_75: /*0200*/ @!P0 BRA 0x150       unroll4.sm_75: /*0320*/ @P1 BRA 0x1d0, /*04a0*/ @P0 BRA 0x400
//   unroll1.sm_80: /*0220*/ @!P0 BRA 0x160       unroll4.sm_80: /*0360*/ @P1 BRA 0x1f0, /*0510*/ @P0 BRA 0x440
//   unroll1.sm_90: /*0220*/ @!P0 BRA 0x160       unroll4.sm_90: /*0390*/ @P1 BRA 0x220, /*0520*/ @P0 BRA 0x450
const LOOPS: Record<string, [number, number][]> = {
  'unroll1.sm_75': [[0x150, 0x200]],
  'unroll1.sm_80': [[0x160, 0x220]],
  'unroll1.sm_90': [[0x160, 0x220]],
  'unroll4.sm_75': [
    [0x1d0, 0x320],
    [0x400, 0x4a0],
  ],
  'unroll4.sm_80': [
    [0x1f0, 0x360],
    [0x440, 0x510],
  ],
  'unroll4.sm_90': [
    [0x220, 0x390],
    [0x450, 0x520],
  ],
};

describe('local fixtures (dot_rows, unroll 4 / unroll 1)', { skip: !fs.existsSync(LOCAL) }, () => {
  for (const [stem, loops] of Object.entries(LOOPS)) {
    const [kernel, arch] = stem.split('.') as [keyof typeof KERNEL, string];
    const name = KERNEL[kernel];
    const files = ['cuobjdump-sass', 'nvdisasm-c-g', 'nvdisasm-c-gi', 'ptxas-v', 'cuobjdump-res-usage'].map(k => `${stem}.${k}.txt`);
    test(stem, { skip: !files.every(has) || !has(`${stem}.cubin`) }, () => {
      const cuobj = parseCuobjdumpSass(read(`${stem}.cuobjdump-sass.txt`));
      const g = parseNvdisasm(read(`${stem}.nvdisasm-c-g.txt`));
      const gi = parseNvdisasm(read(`${stem}.nvdisasm-c-gi.txt`));
      assert.equal(cuobj.arch, arch);
      assert.equal(readCubin(fs.readFileSync(path.join(LOCAL, `${stem}.cubin`))).arch, arch);
      // nvdisasm 12.4 prints no `.target` for these nvcc 13 cubins (and unknown header flags).
      assert.ok(gi.arch === null || gi.arch === arch);
      for (const l of [cuobj, g, gi])
        assert.deepEqual(
          l.functions.map(f => f.name),
          [name],
        );
      const f = cuobj.functions[0];

      // README table: FFMA 5 / LDG 10 for unroll 4; 1 / 2 for unroll 1.
      const h = opcodeHistogram(f);
      assert.deepEqual([h.FFMA, h.LDG], kernel === 'unroll4' ? [5, 10] : [1, 2]);
      assert.equal(classHistogram(f).FP32, h.FFMA);

      assert.deepEqual(
        findSassLoops(f).map(x => [x.headAddress, x.branchAddress]),
        loops,
      );
      assert.deepEqual(findSassLoops(gi.functions[0]), findSassLoops(f));

      // Every FFMA is mul_add (line 3) inlined at the loop body (line 13) with -gi, and line 3 with -g.
      const src = `/tmp/sass-fixtures/${kernel}.cu`;
      for (const ins of gi.functions[0].instructions.filter(i => i.opcode === 'FFMA')) {
        assert.deepEqual(ins.source, { file: src, line: 3, inlinedAt: [{ file: src, line: 13 }] }, `0x${ins.address.toString(16)}`);
        assert.deepEqual(outermostLocation(ins.source!), { file: src, line: 13 });
      }
      for (const ins of g.functions[0].instructions.filter(i => i.opcode === 'FFMA')) {
        assert.deepEqual(ins.source, { file: src, line: 3 });
      }

      // ptxas -v and cuobjdump -res-usage agree on registers.
      const p = parsePtxasVerbose(read(`${stem}.ptxas-v.txt`)).get(name)!;
      const r = parseResUsage(read(`${stem}.cuobjdump-res-usage.txt`)).get(name)!;
      assert.equal(p.arch, arch);
      assert.ok(p.registers > 0);
      assert.equal(p.registers, r.registers);
      assert.equal(p.stackBytes, r.stackBytes);
    });
  }
});
