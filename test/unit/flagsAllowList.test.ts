// Compiler flags from a repository pass an allow-list (issue 23). The real-nvcc tests first show
// that each hostile spelling does write a canary file outside the project when nvcc gets it (so
// the tests prove something), then that the cleaned flags leave it out, name it in a warning, and
// that cubin and program builds with the cleaned flags leave the canary folder empty.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { CompileFlags, flagsFromCompileCommands, flagsFromSettings } from '../../src/engine/toolchain/flags';
import { VariantBuilder } from '../../src/engine/variants/build';

let toolchain: Toolchain | null = null;
let skip: string | false = false;

before(async () => {
  try {
    toolchain = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

/** Every folder a test made, removed after the file's tests (none left in the temp folder). */
const made: string[] = [];
function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

const PROGRAM = `#include <cstdio>
__global__ void k(float *p) { for (int i = 0; i < 8; i++) p[i] *= 2; }
int main() { std::printf("%d\\n", BLOCK); return 0; }
`;

/** A project folder with k.cu and a compile_commands.json entry, and a canary folder beside it (outside the project). */
function project(command: (canary: string) => string) {
  const dir = fs.realpathSync(tempDir('ul-allow-'));
  const canaryDir = fs.realpathSync(tempDir('ul-allow-canary-'));
  const canary = path.join(canaryDir, 'written');
  fs.writeFileSync(path.join(dir, 'k.cu'), PROGRAM);
  const db = path.join(dir, 'compile_commands.json');
  fs.writeFileSync(db, JSON.stringify([{ directory: dir, file: 'k.cu', command: command(canary) }]));
  return { dir, db, file: path.join(dir, 'k.cu'), canary, canaryDir };
}

async function build(flags: CompileFlags, file: string, mode: 'cubin' | 'program') {
  const t = toolchain!;
  const cacheDir = tempDir('ul-allow-cache-');
  const builder = new VariantBuilder({ mode, nvcc: t.nvcc, arch: 'sm_90', flags, cacheDir, runner: t.runner });
  const [r] = await builder.buildAll([{ key: 'k', source: fs.readFileSync(file, 'utf8'), originalPath: file }]);
  return r;
}

/** The three spellings of issue 23 that passed the old deny-list and wrote files. */
const HOLES: { name: string; flags: (canary: string) => string; mode: 'cubin' | 'program'; control: string[]; why: RegExp }[] = [
  {
    name: '-Xcompiler -o<path> (glued)',
    flags: c => `-Xcompiler -o${c}`,
    mode: 'cubin',
    control: ['-cubin'],
    why: /-o.* names a file or program for the host compiler/,
  },
  {
    name: '-Xcompiler -fopt-info-all=<path>',
    flags: c => `-Xcompiler -fopt-info-all=${c}`,
    mode: 'program',
    control: ['-c'],
    why: /-fopt-info-all=.* makes the host compiler write files/,
  },
  {
    name: '-Xfatbin --create=<path>',
    flags: c => `-Xfatbin --create=${c}`,
    mode: 'program',
    control: ['-c'],
    why: /passes options to a CUDA tool whose options Unroll Lens does not check/,
  },
];

describe('flags from compile_commands.json that write files are dropped (real nvcc)', () => {
  for (const hole of HOLES) {
    test(`${hole.name}: nvcc given it writes the canary; cleaned, it is named in a warning and nothing is written`, async t => {
      if (skip) return t.skip(skip);
      const p = project(c => `nvcc -DBLOCK=4 ${hole.flags(c)} -c k.cu -o k.o`);
      // Control: the flag as the repository wrote it does write outside the project.
      const ctl = await toolchain!.runner(
        toolchain!.nvcc.path,
        [...hole.control, '-arch=sm_90', '-DBLOCK=4', ...hole.flags(p.canary).split(' '), '-o', path.join(p.dir, 'k.out'), p.file],
        { cwd: p.dir },
      );
      assert.ok(fs.existsSync(p.canary), `control: nvcc wrote ${p.canary} (exit ${ctl.exitCode}: ${ctl.stderr})`);
      fs.rmSync(p.canary);

      const f = flagsFromCompileCommands(p.db, p.file)!;
      assert.deepEqual(f.args, ['-DBLOCK=4']);
      const line = f.warnings.find(w => w.startsWith(`dropped "${hole.flags(p.canary)}"`));
      assert.ok(line, f.warnings.join('\n'));
      assert.ok(line.includes(`(from ${p.db}, entry for ${p.file})`), line);
      assert.match(line, hole.why);
      const r = await build(f, p.file, hole.mode);
      assert.equal(r.status, 'ok', JSON.stringify(r.messages));
      assert.deepEqual(fs.readdirSync(p.canaryDir), []);
    });
  }

  test('every canonical spelling the allow-list emits is one nvcc 13 accepts (one compile with all of them)', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.realpathSync(tempDir('ul-allow-all-'));
    fs.mkdirSync(path.join(dir, 'inc'));
    fs.writeFileSync(path.join(dir, 'inc', 'pre.h'), '#define PRE 1\n');
    const f = flagsFromSettings(
      {
        nvccArgs: [
          ...[
            '-O',
            '3',
            '--std',
            'c++17',
            '--define-macro',
            'BLOCK=4',
            '--undefine-macro',
            'X',
            '--include-path=inc',
            '--system-include',
            'inc',
          ],
          ...['--pre-include=inc/pre.h', '-ftz', 'true', '--prec-div=false', '-prec-sqrt=true', '--fmad', 'false', '-use_fast_math'],
          ...[
            '--generate-line-info',
            '--expt-relaxed-constexpr',
            '--extended-lambda',
            '-maxrregcount',
            '64',
            '--default-stream',
            'per-thread',
          ],
          ...['--machine', '64', '-Xptxas=-v,-O3,-dlcm=ca', '--ptxas-options', '--warn-on-spills,--allow-expensive-optimizations=true'],
          ...['-Xcompiler', '-O2,-fPIC,-Wall,-std=c++17,-fno-strict-aliasing,-march=x86-64', '--compiler-options=-DHOST=1,-pthread'],
          ...['-Ofc=0', '-dopt=on', '-Werror=reorder', '-diag-suppress=177', '-ftemplate-depth=200', '-extra-device-vectorization'],
        ],
      },
      dir,
    );
    assert.deepEqual(
      f.warnings.filter(w => /dropped/.test(w)),
      [],
    );
    assert.deepEqual(f.args, [
      ...['-O3', '--std=c++17', '-DBLOCK=4', '-UX', '-Iinc', '-isystem', 'inc', '-include', 'inc/pre.h', '-ftz=true', '--prec-div=false'],
      ...['-prec-sqrt=true', '--fmad=false', '-use_fast_math', '--generate-line-info', '--expt-relaxed-constexpr', '--extended-lambda'],
      ...['-maxrregcount=64', '--default-stream=per-thread', '--machine=64', '-Xptxas', '--opt-level=3,--def-load-cache=ca'],
      ...['-Xptxas', '--warn-on-spills,--allow-expensive-optimizations=true'],
      ...['-Xcompiler', '-O2,-fPIC,-Wall,-std=c++17,-fno-strict-aliasing,-march=x86-64', '-Xcompiler', '-DHOST=1,-pthread'],
      ...['-Ofc=0', '-dopt=on', '-Werror=reorder', '-diag-suppress=177', '-ftemplate-depth=200', '-extra-device-vectorization'],
    ]);
    fs.writeFileSync(path.join(dir, 'k.cu'), PROGRAM.replace('BLOCK)', 'BLOCK + PRE)'));
    const r = await build({ ...f, directory: dir }, path.join(dir, 'k.cu'), 'program');
    assert.equal(r.status, 'ok', JSON.stringify(r.messages));
  });
});

describe('every spelling nvcc accepts is parsed, and what is not allowed is named', () => {
  const clean = (args: string[]) => flagsFromSettings({ nvccArgs: args }, '/ws');
  const cases: [string[], string[]][] = [
    [
      ['-Ifoo', '-I', 'bar', '--include-path=baz', '--include-path', 'q'],
      ['-Ifoo', '-Ibar', '-Ibaz', '-Iq'],
    ],
    [
      ['-DA', '-D', 'B=2', '--define-macro=C=3', '--define-macro', 'D'],
      ['-DA', '-DB=2', '-DC=3', '-DD'],
    ],
    [
      ['-UA', '-U', 'B', '--undefine-macro=C', '--undefine-macro', 'D'],
      ['-UA', '-UB', '-UC', '-UD'],
    ],
    [
      ['-O3', '-O', '2', '--optimize=1', '--optimize', '0'],
      ['-O3', '-O2', '--optimize=1', '--optimize=0'],
    ],
    [
      ['-std=c++17', '-std', 'c++20', '--std=c++14', '--std', 'c++11'],
      ['-std=c++17', '-std=c++20', '--std=c++14', '--std=c++11'],
    ],
    [['-G', '--device-debug'], []],
    [
      ['-lineinfo', '--generate-line-info', '--machine', '64', '-m=64'],
      ['-lineinfo', '--generate-line-info', '--machine=64', '-m=64'],
    ],
    [
      ['-rdc=true', '--relocatable-device-code', 'false', '-rdc', 'true'],
      ['-rdc=true', '--relocatable-device-code=false', '-rdc=true'],
    ],
    [
      ['-Xcompiler', '-O2,-fPIC', '-Xcompiler=-Wall', '--compiler-options', '-fopenmp'],
      ['-Xcompiler', '-O2,-fPIC', '-Xcompiler', '-Wall', '-Xcompiler', '-fopenmp'],
    ],
    [
      ['-Xptxas=-v,-O3', '--ptxas-options', '--maxrregcount=32', '-Xptxas', '-dlcm=cg'],
      ['-Xptxas', '--opt-level=3', '-Xptxas', '--maxrregcount=32', '-Xptxas', '--def-load-cache=cg'],
    ],
    [
      ['-isystem', 'a', '--system-include=b'],
      ['-isystem', 'a', '-isystem', 'b'],
    ],
    // nvcc pastes an -Xcompiler value unquoted into sh: spaces split it like commas.
    [
      ['-Xcompiler', ' -O3  -Wall,-fPIC '],
      ['-Xcompiler', '-O3,-Wall,-fPIC'],
    ],
  ];
  for (const [input, want] of cases) {
    test(input.join(' '), () => assert.deepEqual(clean(input).args, want));
  }

  test('refused with a reason: writers, link options, tool pass-through, path-taking host options, unknown flags', () => {
    const f = clean([
      ...['-keep', '--keep-dir=/tmp/x', '-time', '/tmp/t.csv', '-save-temps', '-fdevice-time-trace=/tmp/tr', '-odir', '/tmp/o'],
      ...['-lcuda', '-L/usr/lib', '-Xlinker', '-o,/tmp/x', '-Xcicc', '-O3', '-Xnvvm=-x', '-Xcudafe', '--foo'],
      ...[
        '-Xcompiler',
        '-fplugin=/x.so',
        '-Xcompiler=-B/tmp',
        '-Xcompiler',
        '-specs=/x',
        '-Xcompiler',
        '-wrapper,/bin/sh',
        '-Xcompiler',
        '-fdump-tree-all',
      ],
      ...[
        '-Xcompiler',
        '-save-temps',
        '-Xcompiler',
        '-MF,/tmp/d',
        '-Xcompiler',
        '-Wl,-o,/tmp/x',
        '-Xcompiler',
        '@/tmp/rsp',
        '-Xcompiler',
        '-I/tmp',
      ],
      ...['-Xptxas', '--output-file=/tmp/x', '-Xptxas', '-o,/tmp/x', '-Xptxas', '--options-file=/tmp/o', '-Xptxas', '--bogus'],
      ...['-Xptxas', '--maxrregcount,32', '-idirafter', '/x', '--bogus-flag', '-ldir', '/tmp/libdevice'],
    ]);
    assert.deepEqual(f.args, []);
    const w = f.warnings.join('\n');
    for (const [flag, why] of [
      ['-keep', /write files/],
      ['--keep-dir=/tmp/x', /write files/],
      ['-time /tmp/t.csv', /write files/],
      ['-save-temps', /write files/],
      ['-fdevice-time-trace=/tmp/tr', /write files/],
      ['-odir /tmp/o', /write files/],
      ['-lcuda', /link/],
      ['-Xlinker -o,/tmp/x', /link/],
      ['-Xcicc -O3', /CUDA tool/],
      ['-Xnvvm=-x', /CUDA tool/],
      ['-Xcompiler -fplugin=/x.so', /names a file or program/],
      ['-Xcompiler=-B/tmp', /names a file or program/],
      ['-Xcompiler -specs=/x', /names a file or program/],
      ['-Xcompiler -wrapper,/bin/sh', /-wrapper names a file or program/],
      ['-Xcompiler -wrapper,/bin/sh', /"\/bin\/sh" is not an option/],
      ['-Xcompiler -fdump-tree-all', /write files/],
      ['-Xcompiler -save-temps', /names a file or program/],
      ['-Xcompiler -Wl,-o,/tmp/x', /-Wl passes options to the linker/],
      ['-Xcompiler @/tmp/rsp', /names a file or program/],
      ['-Xcompiler -I/tmp', /names a path/],
      ['-Xptxas --output-file=/tmp/x', /names a file for ptxas/],
      ['-Xptxas -o,/tmp/x', /names a file for ptxas/],
      ['-Xptxas --options-file=/tmp/o', /names a file for ptxas/],
      ['-Xptxas --bogus', /--bogus is not on the ptxas allow-list/],
      ['-Xptxas --maxrregcount,32', /needs its value in the same item/],
      ['-idirafter', /not on the allow-list/],
      ['--bogus-flag', /not on the allow-list/],
      ['-ldir /tmp/libdevice', /libdevice/],
    ] as const) {
      assert.ok(
        f.warnings.some(x => x.startsWith(`unrollLens nvccArgs: dropped ${JSON.stringify(flag)}: `) && why.test(x)),
        `${flag} ${why} in\n${w}`,
      );
    }
  });

  test("values outside an option's grammar are refused, not passed on", () => {
    const f = clean([
      '-O9',
      '-std=c++99x',
      '-maxrregcount=lots',
      '--default-stream=mine',
      '-ftz=yes',
      '-Xptxas',
      '-O9,--fmad=maybe',
      '-O',
      '-c',
    ]);
    assert.deepEqual(f.args, []);
    assert.match(f.warnings.join('\n'), /dropped "-O9": "9" is not a value -O takes/);
    assert.match(f.warnings.join('\n'), /dropped "-O": it needs a level/);
    assert.match(f.warnings.join('\n'), /"maybe" is not a value --fmad takes/);
  });

  test('the builder replaces mode, output, language and dependency flags: dropped without a warning', () => {
    const f = flagsFromSettings(
      { nvccArgs: ['-c', '-cubin', '-o', 'x.o', '-x', 'cu', '-MD', '-MF', 'd', '-MT', 't', '-forward-unknown-to-host-compiler'] },
      '/ws',
    );
    assert.deepEqual([f.args, f.warnings], [[], []]);
  });
});
