// Unit tests of the ptxas -v reader (src/engine/sass/ptxas.ts) on real logs: the H200 fixtures
// (test/fixtures/ptxas/) and the CUDA 13.0 logs of test/fixtures/sass/elf/sasstest.cu
// (build.sh there), plus hand-written logs in the formats of older ptxas versions.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parsePtxasLog, parsePtxasVerbose } from '../../src/engine/sass/ptxas';
import { parseResUsage } from '../../src/engine/sass/cuobjdump';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures');
const read = (rel: string): string => fs.readFileSync(path.join(FIXTURES, rel), 'utf8');

describe('parsePtxasVerbose: H200 fixtures', () => {
  test('matmul: registers, barriers, stack/spills, compile time of every function', () => {
    const m = parsePtxasVerbose(read('ptxas/matmul.ptxas-v.txt'));
    // name -> [registers, compile time ms] from the "Used N registers" and "Compile time" lines.
    const want: [string, number, number][] = [
      ['_Z9mm_pragmaILi16EEvPKfS1_Pfi', 32, 19.89],
      ['_Z9mm_pragmaILi8EEvPKfS1_Pfi', 32, 6.622],
      ['_Z9mm_pragmaILi4EEvPKfS1_Pfi', 25, 5.716],
      ['_Z9mm_pragmaILi2EEvPKfS1_Pfi', 20, 4.39],
      ['_Z9mm_manualILi16EEvPKfS1_Pfi', 32, 8.412],
      ['_Z9mm_manualILi8EEvPKfS1_Pfi', 32, 5.564],
      ['_Z9mm_manualILi4EEvPKfS1_Pfi', 27, 4.097],
      ['_Z9mm_manualILi2EEvPKfS1_Pfi', 20, 3.338],
      ['_Z10mm_defaultPKfS0_Pfi', 32, 10.185],
      ['_Z8mm_basicPKfS0_Pfi', 16, 3.274],
    ];
    assert.deepEqual(
      [...m.keys()],
      want.map(w => w[0]),
    );
    for (const [name, regs, ms] of want) {
      const u = m.get(name)!;
      assert.equal(u.registers, regs, name);
      assert.equal(u.compileTimeMs, ms, name);
      assert.equal(u.arch, 'sm_90');
      assert.equal(u.entry, true);
      assert.equal(u.barriers, 0);
      assert.equal(u.stackBytes, 0);
      assert.equal(u.spillStoreBytes, 0);
      assert.equal(u.spillLoadBytes, 0);
      // "Used 32 registers, used 0 barriers": no smem and no cmem printed.
      assert.equal(u.sharedBytes, 0);
      assert.equal(u.constantBytes, 0);
      assert.deepEqual(u.reported, ['registers', 'stackBytes', 'spillStoreBytes', 'spillLoadBytes', 'barriers']);
    }
  });

  test('matmul: ptxas registers equal cuobjdump -res-usage REG for every function', () => {
    const p = parsePtxasVerbose(read('ptxas/matmul.ptxas-v.txt'));
    const r = parseResUsage(read('sass/matmul.cuobjdump-res-usage.txt'));
    assert.equal(p.size, 10);
    for (const [name, u] of p) assert.equal(r.get(name)?.registers, u.registers, name);
  });

  test('bloat: registers, 1 barrier and 2048 bytes smem for every function', () => {
    const m = parsePtxasVerbose(read('ptxas/bloat.ptxas-v.txt'));
    const regs: Record<string, number> = {
      _Z6linearILi0ELi4EEvPKfS1_S1_Pf: 36,
      _Z6linearILi0ELi1EEvPKfS1_S1_Pf: 32,
      _Z6linearILi0ELi0EEvPKfS1_S1_Pf: 46,
      _Z6linearILi32ELi0EEvPKfS1_S1_Pf: 46,
      _Z6linearILi16ELi0EEvPKfS1_S1_Pf: 47,
      _Z6linearILi8ELi0EEvPKfS1_S1_Pf: 47,
      _Z6linearILi4ELi0EEvPKfS1_S1_Pf: 38,
      _Z6linearILi2ELi0EEvPKfS1_S1_Pf: 34,
      _Z6linearILi1ELi0EEvPKfS1_S1_Pf: 46,
      _Z6linearILi1ELi16EEvPKfS1_S1_Pf: 34,
      _Z6linearILi1ELi4EEvPKfS1_S1_Pf: 32,
      _Z6linearILi1ELi1EEvPKfS1_S1_Pf: 40,
    };
    assert.deepEqual([...m.keys()], Object.keys(regs));
    for (const [name, r] of Object.entries(regs)) {
      const u = m.get(name)!;
      assert.equal(u.registers, r, name);
      assert.equal(u.barriers, 1);
      assert.equal(u.sharedBytes, 2048);
      assert.ok(u.reported.includes('sharedBytes'));
    }
    assert.equal(m.get('_Z6linearILi0ELi4EEvPKfS1_S1_Pf')!.compileTimeMs, 603.732);
    const log = parsePtxasLog(read('ptxas/bloat.ptxas-v.txt'));
    assert.deepEqual(log.gmemBytes, [0]);
    assert.deepEqual(log.warnings, []);
  });
});

describe('parsePtxasLog: CUDA 13.0 logs of sasstest.cu', () => {
  test('sm_90: spills, cumulative stack, warnings interleaved, a device function', () => {
    const text = read('sass/elf/sasstest.sm_90.ptxas-v.txt');
    const log = parsePtxasLog(text);
    assert.deepEqual(log.warnings, [
      "Local memory used for function '_Z12spill_kernelPfPKfi', size of stack frame: 480 bytes",
      "Registers are spilled to local memory in function '_Z12spill_kernelPfPKfi', 252 bytes spill stores, 300 bytes spill loads",
    ]);
    assert.deepEqual(
      log.functions.map(f => [f.name, f.entry, f.arch]),
      [
        ['_Z12inline_chainPfPKf', true, 'sm_90'],
        ['_Z12spill_kernelPfPKfi', true, 'sm_90'],
        ['_Z11shared_callPfPKfi', true, 'sm_90'],
        ['_Z6helperPKfi', false, 'sm_90'],
        ['_Z12nested_loopsPfPKfii', true, 'sm_90'],
        ['_Z11simple_loopPfPKfi', true, 'sm_90'],
      ],
    );
    const m = parsePtxasVerbose(text);
    const spill = m.get('_Z12spill_kernelPfPKfi')!;
    // 480 bytes stack frame, 252 bytes spill stores, 300 bytes spill loads
    // Used 24 registers, used 0 barriers, 480 bytes cumulative stack size
    assert.deepEqual(
      [spill.stackBytes, spill.spillStoreBytes, spill.spillLoadBytes, spill.registers, spill.barriers, spill.cumulativeStackBytes],
      [480, 252, 300, 24, 0, 480],
    );
    const shared = m.get('_Z11shared_callPfPKfi')!;
    assert.deepEqual([shared.registers, shared.barriers, shared.sharedBytes], [10, 1, 1024]);
    // The device function has properties but no Used line.
    const helper = m.get('_Z6helperPKfi')!;
    assert.equal(helper.entry, false);
    assert.equal(helper.registers, 0);
    assert.deepEqual(helper.reported, ['stackBytes', 'spillStoreBytes', 'spillLoadBytes']);
    assert.equal(helper.compileTimeMs, undefined);
  });

  test('sm_80: cmem[0] in the Used line', () => {
    const m = parsePtxasVerbose(read('sass/elf/sasstest.sm_80.ptxas-v.txt'));
    // Used 24 registers, used 0 barriers, 464 bytes cumulative stack size, 372 bytes cmem[0]
    const u = m.get('_Z12spill_kernelPfPKfi')!;
    assert.deepEqual([u.registers, u.cumulativeStackBytes, u.constantBytes], [24, 464, 372]);
    assert.deepEqual(u.constantBanks, { 0: 372 });
    assert.equal(u.arch, 'sm_80');
    // cuobjdump -res-usage of the same cubin agrees on registers and constant bank 0.
    const r = parseResUsage(read('sass/elf/sasstest.sm_80.cuobjdump-res-usage.txt'));
    for (const [name, p] of m) {
      if (!p.entry) continue;
      assert.equal(r.get(name)!.registers, p.registers, name);
      assert.equal(r.get(name)!.constantBytes, p.constantBytes, name);
    }
  });

  test('two architectures in one log: runs, arch filter, first wins by default', () => {
    const text = read('sass/elf/sasstest.multiarch.ptxas-v.txt');
    const log = parsePtxasLog(text);
    assert.deepEqual(log.gmemBytes, [0, 0]);
    assert.equal(log.functions.length, 12);
    assert.deepEqual(
      log.functions.map(f => f.run),
      [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
    );
    const helperArchs = log.functions.filter(f => f.name === '_Z6helperPKfi').map(f => f.arch);
    assert.deepEqual(helperArchs, ['sm_80', 'sm_90']);
    // nested_loops: 11 registers for sm_80, 14 for sm_90.
    assert.equal(parsePtxasVerbose(text, { arch: 'sm_80' }).get('_Z12nested_loopsPfPKfii')!.registers, 11);
    assert.equal(parsePtxasVerbose(text, { arch: 'sm_90' }).get('_Z12nested_loopsPfPKfii')!.registers, 14);
    assert.equal(parsePtxasVerbose(text).get('_Z12nested_loopsPfPKfii')!.registers, 11);
  });

  test('-rdc: device-function blocks before any entry take the run arch and their compile time', () => {
    const log = parsePtxasLog(read('sass/elf/sasstest.rdc.ptxas-v.txt'));
    const devices = log.functions.filter(f => !f.entry);
    // "Function properties for _Z6helperPKfi$N" (a clone; N varies between builds) and _Z6helperPKfi.
    assert.equal(devices.length, 2);
    assert.ok(devices[0].name.startsWith('_Z6helperPKfi$'));
    assert.equal(devices[1].name, '_Z6helperPKfi');
    for (const d of devices) {
      assert.equal(d.arch, 'sm_86');
      assert.equal(typeof d.compileTimeMs, 'number');
    }
    assert.equal(log.functions.filter(f => f.entry).length, 5);
  });
});

describe('parsePtxasLog: older formats (hand-written)', () => {
  test('cmem banks, lmem and a+b sums, textures', () => {
    const text = [
      "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_52'",
      'ptxas info    : Function properties for _Z3fooPf',
      '    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads',
      'ptxas info    : Used 10 registers, 32+0 bytes lmem, 4+16 bytes smem, 356 bytes cmem[0], 8 bytes cmem[2], 1 textures',
    ].join('\n');
    const u = parsePtxasVerbose(text).get('_Z3fooPf')!;
    assert.deepEqual(
      [u.registers, u.localBytes, u.sharedBytes, u.constantBytes, u.stackBytes, u.spillStoreBytes, u.textures],
      [10, 32, 20, 364, 8, 4, 1],
    );
    assert.deepEqual(u.constantBanks, { 0: 356, 2: 8 });
    assert.equal(u.arch, 'sm_52');
  });

  test('a callee block between an entry and its own properties: Used belongs to the entry', () => {
    const text = [
      "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_70'",
      'ptxas info    : Function properties for _Z6helperv',
      '    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads',
      'ptxas info    : Function properties for _Z6kernelPf',
      '    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads',
      'ptxas info    : Used 18 registers, 360 bytes cmem[0]',
    ].join('\r\n');
    const m = parsePtxasVerbose(text);
    assert.equal(m.get('_Z6kernelPf')!.registers, 18);
    assert.equal(m.get('_Z6helperv')!.registers, 0);
    assert.equal(m.get('_Z6helperv')!.stackBytes, 16);
    assert.equal(m.get('_Z6helperv')!.arch, 'sm_70');
  });

  test('a callee block with no properties of the entry: Used still belongs to the entry', () => {
    const text = [
      "ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_60'",
      'ptxas info    : Function properties for _Z6helperv',
      '    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads',
      'ptxas info    : Used 7 registers, 328 bytes cmem[0]',
    ].join('\n');
    const m = parsePtxasVerbose(text);
    assert.equal(m.get('_Z6kernelPf')!.registers, 7);
    assert.equal(m.get('_Z6helperv')!.registers, 0);
  });

  test('errors and file-prefixed warnings are collected', () => {
    const log = parsePtxasLog(
      [
        'ptxas /tmp/tmpxft_0001_00000000-6_k.ptx, line 12; warning : Double is not supported. Demoting to float',
        "ptxas error   : Entry function '_Z1kv' uses too much shared data (0x10000 bytes, 0xc000 max)",
        "nvcc error   : 'ptxas' died due to signal 11",
      ].join('\n'),
    );
    assert.deepEqual(log.warnings, ['Double is not supported. Demoting to float']);
    assert.deepEqual(log.errors, ["Entry function '_Z1kv' uses too much shared data (0x10000 bytes, 0xc000 max)"]);
    assert.deepEqual(log.functions, []);
  });
});
