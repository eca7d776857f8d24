// Unit tests of the cuobjdump readers (src/engine/sass/cuobjdump.ts) on real listings:
// test/fixtures/sass/*.txt (CUDA 13.0, H200, sm_90; copied from the project's shared fixtures)
// and test/fixtures/sass/elf/*.txt (listings of test/fixtures/sass/elf/sasstest.cu made with
// cuobjdump 13.0 by test/fixtures/sass/elf/listings.sh).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseCuobjdumpSass, parseCuobjdumpSassByArch, parseResUsage, parseResUsageByArch } from '../../src/engine/sass/cuobjdump';
import type { SassFunction, SassListing } from '../../src/engine/sass/model';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures');
const read = (rel: string): string => fs.readFileSync(path.join(FIXTURES, rel), 'utf8');

function counts(l: SassListing): [string, number][] {
  return l.functions.map(f => [f.name, f.instructions.length]);
}
function fn(l: SassListing, name: string): SassFunction {
  const f = l.functions.find(x => x.name === name);
  if (!f) throw new Error(`no function ${name}`);
  return f;
}

describe('parseCuobjdumpSass: H200 fixtures', () => {
  // Expected counts: every `/*addr*/` line inside a function, by
  //   awk '/Function :/{n=$3; o[++k]=n} /^[ \t]*\/\*[0-9a-f]+\*\//{c[n]++}
  //        END{for(i=1;i<=k;i++) print o[i], c[o[i]]}' matmul.cuobjdump-sass.txt
  test('matmul: every function with its exact instruction count (padding included)', () => {
    const l = parseCuobjdumpSass(read('sass/matmul.cuobjdump-sass.txt'));
    assert.equal(l.arch, 'sm_90');
    assert.deepEqual(counts(l), [
      ['_Z9mm_pragmaILi16EEvPKfS1_Pfi', 144],
      ['_Z9mm_pragmaILi8EEvPKfS1_Pfi', 104],
      ['_Z9mm_pragmaILi4EEvPKfS1_Pfi', 88],
      ['_Z9mm_pragmaILi2EEvPKfS1_Pfi', 80],
      ['_Z9mm_manualILi16EEvPKfS1_Pfi', 184],
      ['_Z9mm_manualILi8EEvPKfS1_Pfi', 120],
      ['_Z9mm_manualILi4EEvPKfS1_Pfi', 88],
      ['_Z9mm_manualILi2EEvPKfS1_Pfi', 64],
      ['_Z10mm_defaultPKfS0_Pfi', 216],
      ['_Z8mm_basicPKfS0_Pfi', 56],
    ]);
    for (const f of l.functions) {
      assert.equal(f.bytes, f.instructions.length * 16, f.name);
      assert.equal(f.arch, 'sm_90');
      // Addresses are consecutive 16-byte slots from 0.
      f.instructions.forEach((ins, i) => assert.equal(ins.address, i * 16, `${f.name} #${i}`));
    }
  });

  test('reduce: every function with its exact instruction count', () => {
    // Same awk command over reduce.cuobjdump-sass.txt.
    const l = parseCuobjdumpSass(read('sass/reduce.cuobjdump-sass.txt'));
    assert.equal(l.arch, 'sm_90');
    assert.deepEqual(counts(l), [
      ['_Z21reduceCompleteUnroll8ILj512EEvPiS0_j', 160],
      ['_Z12reduceUnrollILi8EEvPiS0_j', 80],
      ['_Z12reduceUnrollILi4EEvPiS0_j', 64],
      ['_Z12reduceUnrollILi2EEvPiS0_j', 56],
      ['_Z17reduceUnrollWarp8PiS_j', 152],
      ['_Z17reduceInterleavedPiS_j', 48],
    ]);
  });

  test('instruction fields: predicates, modifiers, operands, targets, padding', () => {
    const f = fn(parseCuobjdumpSass(read('sass/matmul.cuobjdump-sass.txt')), '_Z9mm_pragmaILi16EEvPKfS1_Pfi');
    const at = (a: number) => f.instructions.find(i => i.address === a)!;
    // /*00a0*/ ISETP.GE.AND P0, PT, R3, R0, PT ;
    assert.deepEqual(at(0xa0), {
      address: 0xa0,
      predicate: null,
      opcode: 'ISETP',
      modifiers: ['GE', 'AND'],
      operands: 'P0, PT, R3, R0, PT',
    });
    // /*00d0*/ @P0 EXIT ;
    assert.equal(at(0xd0).predicate, '@P0');
    assert.equal(at(0xd0).opcode, 'EXIT');
    assert.equal(at(0xd0).operands, '');
    // /*0120*/ @!P0 BRA 0x7c0 ;
    assert.equal(at(0x120).predicate, '@!P0');
    assert.equal(at(0x120).target, 0x7c0);
    // /*0670*/ @P1 BRA 0x1f0 ;  (the loop's backward branch)
    assert.equal(at(0x670).target, 0x1f0);
    // /*0200*/ LDG.E R28, desc[UR6][R10.64] ;
    assert.deepEqual(at(0x200).modifiers, ['E']);
    assert.equal(at(0x200).operands, 'R28, desc[UR6][R10.64]');
    // /*0810*/ BRA 0x810;   end-of-code trap, printed without a blank before ';'
    assert.equal(at(0x810).opcode, 'BRA');
    assert.equal(at(0x810).target, 0x810);
    // /*0820*/ … /*08f0*/ NOP;  padding to the section end
    const tail = f.instructions.slice(f.instructions.findIndex(i => i.address === 0x820));
    assert.equal(tail.length, 14);
    assert.ok(tail.every(i => i.opcode === 'NOP' && i.operands === ''));
  });

  test('targets of BRA.DIV, BSSY and WARPSYNC.COLLECTIVE; none for a lone WARPSYNC mask', () => {
    const f = fn(parseCuobjdumpSass(read('sass/reduce.cuobjdump-sass.txt')), '_Z21reduceCompleteUnroll8ILj512EEvPiS0_j');
    const at = (a: number) => f.instructions.find(i => i.address === a)!;
    // /*0500*/ BRA.DIV UR6, 0x720 ;
    assert.deepEqual([at(0x500).opcode, at(0x500).modifiers, at(0x500).target], ['BRA', ['DIV'], 0x720]);
    // /*0040*/ BSSY B0, 0x2d0 ;
    assert.equal(at(0x40).target, 0x2d0);
    // /*0730*/ WARPSYNC.COLLECTIVE R4, 0x760 ;
    assert.equal(at(0x730).target, 0x760);
    const lone = parseCuobjdumpSass('\tcode for sm_90\n\t\tFunction : k\n        /*0000*/  WARPSYNC 0xffffffff ;\n');
    assert.equal(lone.functions[0].instructions[0].target, undefined);
  });
});

describe('parseCuobjdumpSass: local sasstest listings (cuobjdump 13.0)', () => {
  // Counts from:
  //   awk '/Function :/{n=$3; o[++k]=n} /^[ \t]*\/\*[0-9a-f]+\*\//{c[n]++}
  //        END{for(i=1;i<=k;i++) print o[i], c[o[i]]}' sasstest.sm_XX.cuobjdump-sass.txt
  const expected: Record<string, [string, number][]> = {
    sm_75: [
      ['_Z12inline_chainPfPKf', 16],
      ['_Z12spill_kernelPfPKfi', 408],
      ['_Z11shared_callPfPKfi', 40],
      ['_Z12nested_loopsPfPKfii', 48],
      ['_Z11simple_loopPfPKfi', 32],
    ],
    sm_80: [
      ['_Z12inline_chainPfPKf', 24],
      ['_Z12spill_kernelPfPKfi', 248],
      ['_Z11shared_callPfPKfi', 48],
      ['_Z12nested_loopsPfPKfii', 56],
      ['_Z11simple_loopPfPKfi', 40],
    ],
    sm_86: [
      ['_Z12inline_chainPfPKf', 24],
      ['_Z12spill_kernelPfPKfi', 416],
      ['_Z11shared_callPfPKfi', 48],
      ['_Z12nested_loopsPfPKfii', 56],
      ['_Z11simple_loopPfPKfi', 40],
    ],
    sm_89: [
      ['_Z12inline_chainPfPKf', 24],
      ['_Z12spill_kernelPfPKfi', 416],
      ['_Z11shared_callPfPKfi', 48],
      ['_Z12nested_loopsPfPKfii', 56],
      ['_Z11simple_loopPfPKfi', 40],
    ],
    sm_90: [
      ['_Z12inline_chainPfPKf', 32],
      ['_Z12spill_kernelPfPKfi', 248],
      ['_Z11shared_callPfPKfi', 56],
      ['_Z12nested_loopsPfPKfii', 56],
      ['_Z11simple_loopPfPKfi', 40],
    ],
  };
  for (const [arch, want] of Object.entries(expected)) {
    test(`${arch}: counts and arch`, () => {
      const l = parseCuobjdumpSass(read(`sass/elf/sasstest.${arch}.cuobjdump-sass.txt`));
      assert.equal(l.arch, arch);
      assert.deepEqual(counts(l), want);
    });
  }

  test('sm_75: CALL.REL.NOINC and RET.REL.NODEC targets inside the caller section', () => {
    const f = fn(parseCuobjdumpSass(read('sass/elf/sasstest.sm_75.cuobjdump-sass.txt')), '_Z11shared_callPfPKfi');
    const call = f.instructions.find(i => i.opcode === 'CALL')!;
    // /*00c0*/ CALL.REL.NOINC 0x120 ;   /*0230*/ RET.REL.NODEC R2 0x0 ;
    assert.deepEqual([call.address, call.modifiers, call.target], [0xc0, ['REL', 'NOINC'], 0x120]);
    const ret = f.instructions.find(i => i.opcode === 'RET')!;
    assert.deepEqual([ret.address, ret.operands, ret.target], [0x230, 'R2 0x0', 0]);
  });

  test('fat binary: one listing per ELF member; merged listing has per-function arch', () => {
    // awk '/code for sm_/{a=$3} /Function :/{n=a" "$3; o[++k]=n} /^[ \t]*\/\*[0-9a-f]+\*\//{c[n]++}
    //      END{for(i=1;i<=k;i++) print o[i], c[o[i]]}' sasstest.fatbin.cuobjdump-sass.txt
    const text = read('sass/elf/sasstest.fatbin.cuobjdump-sass.txt');
    const members = parseCuobjdumpSassByArch(text);
    assert.deepEqual(
      members.map(m => m.arch),
      ['sm_80', 'sm_90'],
    );
    assert.deepEqual(counts(members[0]), expected.sm_80);
    assert.deepEqual(counts(members[1]), expected.sm_90);
    const all = parseCuobjdumpSass(text);
    assert.equal(all.arch, null);
    assert.equal(all.functions.length, 10);
    assert.deepEqual(
      all.functions.map(f => f.arch),
      [...Array(5).fill('sm_80'), ...Array(5).fill('sm_90')],
    );
  });

  test('host object with -sass -ptx: the PTX text is skipped', () => {
    // Same awk command over sasstest.multi-o.cuobjdump-sass-ptx.txt: the same 10 functions.
    const members = parseCuobjdumpSassByArch(read('sass/elf/sasstest.multi-o.cuobjdump-sass-ptx.txt'));
    assert.deepEqual(
      members.map(m => m.arch),
      ['sm_80', 'sm_90'],
    );
    assert.deepEqual(counts(members[0]), expected.sm_80);
    assert.deepEqual(counts(members[1]), expected.sm_90);
  });
});

describe('parseCuobjdumpSass: unusual text', () => {
  test('CRLF line ends, odd spacing, no code-for line, headerflags arch', () => {
    const text = [
      '\t\tFunction :   _Z1kv  ',
      '\t.headerflags\t@"EF_CUDA_SM86 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM86)"',
      '/*0000*/ @!PT   LDS.U.128   RZ, [RZ] ;   /* 0x0000000000ff7984 */',
      '   /* 0x000fe20000000c00 */',
      '        /*0010*/EXIT;',
      '\t\t..........',
    ].join('\r\n');
    const l = parseCuobjdumpSass(text);
    assert.equal(l.arch, 'sm_86');
    assert.equal(l.functions.length, 1);
    const [a, b] = l.functions[0].instructions;
    assert.deepEqual(a, { address: 0, predicate: '@!PT', opcode: 'LDS', modifiers: ['U', '128'], operands: 'RZ, [RZ]' });
    assert.deepEqual([b.address, b.opcode, b.operands], [0x10, 'EXIT', '']);
    assert.equal(l.functions[0].bytes, 0x20);
  });

  test('lines outside a function are ignored', () => {
    const l = parseCuobjdumpSass('        /*0000*/   NOP ;\n\tcode for sm_90\n        /*0010*/  NOP ;\n');
    assert.deepEqual(l, { arch: null, functions: [] });
  });
});

describe('parseResUsage', () => {
  test('matmul: every function (H200 fixture)', () => {
    const m = parseResUsage(read('sass/matmul.cuobjdump-res-usage.txt'));
    const regs: Record<string, number> = {
      _Z9mm_pragmaILi16EEvPKfS1_Pfi: 32,
      _Z9mm_pragmaILi8EEvPKfS1_Pfi: 32,
      _Z9mm_pragmaILi4EEvPKfS1_Pfi: 25,
      _Z9mm_pragmaILi2EEvPKfS1_Pfi: 20,
      _Z9mm_manualILi16EEvPKfS1_Pfi: 32,
      _Z9mm_manualILi8EEvPKfS1_Pfi: 32,
      _Z9mm_manualILi4EEvPKfS1_Pfi: 27,
      _Z9mm_manualILi2EEvPKfS1_Pfi: 20,
      _Z10mm_defaultPKfS0_Pfi: 32,
      _Z8mm_basicPKfS0_Pfi: 16,
    };
    assert.deepEqual([...m.keys()], Object.keys(regs));
    for (const [name, r] of Object.entries(regs)) {
      const u = m.get(name)!;
      assert.equal(u.registers, r, name);
      assert.equal(u.stackBytes, 0);
      assert.equal(u.sharedBytes, 0);
      assert.equal(u.localBytes, 0);
      assert.equal(u.constantBytes, 556);
      assert.deepEqual(u.constantBanks, { 0: 556 });
      assert.equal(u.textures, 0);
      assert.equal(u.surfaces, 0);
      assert.equal(u.samplers, 0);
      // Not printed by cuobjdump: 0 and not reported.
      assert.equal(u.barriers, 0);
      assert.equal(u.spillStoreBytes, 0);
      assert.deepEqual([...u.reported].sort(), ['constantBytes', 'localBytes', 'registers', 'sharedBytes', 'stackBytes']);
    }
    const members = parseResUsageByArch(read('sass/matmul.cuobjdump-res-usage.txt'));
    assert.equal(members.length, 1);
    assert.equal(members[0].arch, null);
    assert.equal(members[0].globalBytes, 0);
  });

  test('sasstest sm_90: stack of the spilling kernel, shared of shared_call', () => {
    const m = parseResUsage(read('sass/elf/sasstest.sm_90.cuobjdump-res-usage.txt'));
    // REG:24 STACK:480 … CONSTANT[0]:548
    assert.equal(m.get('_Z12spill_kernelPfPKfi')!.stackBytes, 480);
    assert.equal(m.get('_Z12spill_kernelPfPKfi')!.registers, 24);
    assert.equal(m.get('_Z12spill_kernelPfPKfi')!.constantBytes, 548);
    // SHARED:2048: the kernel's 1024-byte tile plus the 1 KiB .nv.shared.reserved.0 section of
    // sm_90 cubins (ptxas -v reports only the kernel's own 1024 bytes smem).
    assert.equal(m.get('_Z11shared_callPfPKfi')!.sharedBytes, 2048);
  });

  test('fat binary: one member per arch; arch option picks one, first wins otherwise', () => {
    const text = read('sass/elf/sasstest.fatbin.cuobjdump-res-usage.txt');
    const members = parseResUsageByArch(text);
    assert.deepEqual(
      members.map(m => m.arch),
      ['sm_80', 'sm_90'],
    );
    // sm_80: REG:11 for nested_loops; sm_90: REG:14.
    assert.equal(parseResUsage(text, { arch: 'sm_90' }).get('_Z12nested_loopsPfPKfii')!.registers, 14);
    assert.equal(parseResUsage(text, { arch: 'sm_80' }).get('_Z12nested_loopsPfPKfii')!.registers, 11);
    assert.equal(parseResUsage(text).get('_Z12nested_loopsPfPKfii')!.registers, 11);
    assert.equal(parseResUsage(text, { arch: 'sm_75' }).size, 0);
  });

  test('several constant banks are summed and kept per bank', () => {
    const m = parseResUsage(
      ' Function f:\n  REG:8 STACK:16 SHARED:0 LOCAL:4 CONSTANT[0]:356 CONSTANT[2]:8 CONSTANT[3]:40 TEXTURE:1 SURFACE:0 SAMPLER:0\n',
    );
    const u = m.get('f')!;
    assert.equal(u.constantBytes, 404);
    assert.deepEqual(u.constantBanks, { 0: 356, 2: 8, 3: 40 });
    assert.equal(u.localBytes, 4);
    assert.equal(u.textures, 1);
  });
});
