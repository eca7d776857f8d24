import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { COMMANDS, main, usage } from '../../src/cli/main';
import { numberOption, parseCommandLine } from '../../src/cli/args';
import { elementsOption } from '../../src/cli/gpuOptions';
import { UsageError } from '../../src/cli/io';
import { DEFAULT_SETTINGS, SETTINGS } from '../../src/settings';
import { REPO_ROOT, SAMPLES } from './helpers';

async function run(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

function tmpCu(name: string, text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cli-'));
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

describe('unroll-lens scan', () => {
  const SRC = `__global__ void saxpy_tiled(float* y, const float* x, float a, int n) {
#pragma unroll 4
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 64; ++j) y[i] += a * x[j];
  }
}
void host() { for (int i = 0; i < 3; ++i) {} }
`;

  test('--json follows the documented contract exactly', async () => {
    const file = tmpCu('a.cu', SRC);
    const r = await run(['scan', file, '--json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), {
      files: [
        {
          path: file,
          kernels: [
            {
              name: 'saxpy_tiled',
              qualifier: 'global',
              line: 1,
              loops: [
                { line: 3, kind: 'for', depth: 0, pragma: { kind: 'count', factor: 4, text: 'unroll 4', line: 2 }, tripCount: 'runtime' },
                { line: 4, kind: 'for', depth: 1, pragma: null, tripCount: 64 },
              ],
              manualUnrolls: [],
            },
          ],
        },
      ],
      skipped: [],
    });
  });

  test('--json marks files with syntax errors and lists every walked file it did not scan, with the reason', async t => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-walk-'));
    const put = (name: string, text: string | Buffer) => {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    };
    put('kernel.cu', '#include "ops.h"\n__global__ void k(float* x) { zero4(x); }\n');
    // ops.h is device code only through defs.h's macro (repro m4); defs.h itself holds none.
    put('defs.h', '#pragma once\n#define MYLIB_DEVICE_ MYLIB_DEVICE\n#define MYLIB_DEVICE __device__\n');
    put(
      'lib/ops.h',
      '#pragma once\n#include "../defs.h"\nMYLIB_DEVICE_ void zero4(float* x) {\n#pragma unroll\n  for (int i = 0; i < 4; ++i) x[i] = 0;\n}\n',
    );
    put('host.hpp', 'struct S { int device_count; };\n');
    put('broken.cu', '__global__ void b(float* x) {\n  for (int i = 0; i < 4; ++i) x[i] = ;\n}\n');
    put('blob.cuh', Buffer.from([0x5f, 0x00, 0x01, 0x02]));
    put('note.txt', '__device__\n');
    fs.writeFileSync(path.join(dir, 'huge.cu'), '');
    fs.truncateSync(path.join(dir, 'huge.cu'), 33 * 1024 * 1024);
    const r = await run(['scan', dir, '--json']);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as {
      files: { path: string; syntaxErrors?: boolean; kernels: { name: string; loops: unknown[] }[] }[];
      skipped: { path: string; reason: string }[];
    };
    const rel = (p: string) => path.relative(dir, p);
    assert.deepEqual(
      j.files.map(f => [rel(f.path), f.syntaxErrors ?? false]),
      [
        ['broken.cu', true],
        ['kernel.cu', false],
        ['lib/ops.h', false],
      ],
    );
    assert.equal(j.files[2].kernels[0].name, 'zero4');
    assert.equal(j.files[2].kernels[0].loops.length, 1);
    assert.deepEqual(
      j.skipped.map(k => [rel(k.path), k.reason]),
      [
        ['blob.cuh', 'binary'],
        ['defs.h', 'no-device-code'],
        ['host.hpp', 'no-device-code'],
        ['huge.cu', 'too-large'],
      ],
    );
    const table = await run(['scan', dir]);
    assert.match(table.out, /huge\.cu {2}\(skipped: too-large\)/);
    assert.match(table.out, /3 files, 3 device functions, 2 loops; skipped 4 \(2 headers without device code, 2 listed above\)/);
    if (process.platform !== 'win32') {
      const { execFileSync } = await import('child_process');
      execFileSync('mkfifo', [path.join(dir, 'pipe.cu')]);
      const again = JSON.parse((await run(['scan', dir, '--json'])).out) as typeof j;
      assert.deepEqual(again.skipped.find(k => rel(k.path) === 'pipe.cu')?.reason, 'not-a-regular-file');
    } else t.diagnostic('no FIFOs');
  });

  test('a scan on several threads gives the same output as on one, in the same order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-threads-'));
    fs.writeFileSync(path.join(dir, 'cfg.h'), '#pragma once\n#define T_DEV __device__\n#define T_UNROLL #pragma unroll\n');
    for (let i = 0; i < 40; i++)
      fs.writeFileSync(
        path.join(dir, `k${String(i).padStart(2, '0')}.cu`),
        `#include "cfg.h"\nT_DEV void f${i}(float* a) {\n  T_UNROLL\n  for (int i = 0; i < ${i + 1}; ++i) a[i] = 0;\n}\n`,
      );
    const before = process.env.UNROLL_LENS_SCAN_THREADS;
    const runWith = async (threads: string) => {
      process.env.UNROLL_LENS_SCAN_THREADS = threads;
      const r = await run(['scan', dir, '--json']);
      assert.equal(r.code, 0, r.err);
      return r.out;
    };
    try {
      const one = await runWith('1');
      const three = await runWith('3');
      assert.equal(three, one);
      const j = JSON.parse(one) as { files: { kernels: { loops: { tripCount: unknown; pragma: unknown }[] }[] }[] };
      assert.deepEqual(
        j.files.map(f => f.kernels[0].loops[0].tripCount),
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
      assert.ok(j.files.every(f => f.kernels[0].loops[0].pragma !== null));
    } finally {
      if (before === undefined) delete process.env.UNROLL_LENS_SCAN_THREADS;
      else process.env.UNROLL_LENS_SCAN_THREADS = before;
    }
  });

  test('headers are found in the scanned tree (its root and include/) when no flags name them; flags lose nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-tree-'));
    const put = (name: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    };
    // tiny-cuda-nn's layout: src/*.cu include <tnn/common.h> from include/.
    put('include/tnn/common.h', '#pragma once\n#define TNN_UNROLL _Pragma("unroll")\n#define TNN_DEV __device__ __forceinline__\n');
    put('src/a.cu', '#include <tnn/common.h>\nTNN_DEV void f(float* x) {\n  TNN_UNROLL\n  for (int i = 0; i < 4; ++i) x[i] = 0;\n}\n');
    type J = {
      files: { path: string; kernels: { loops: { pragma: { macro?: { origin: { kind: string; file?: string } } } | null }[] }[] }[];
    };
    const pragmas = (j: J) =>
      j.files.flatMap(f => f.kernels.flatMap(k => k.loops.map(l => l.pragma?.macro?.origin.file ?? l.pragma?.macro?.origin.kind ?? null)));
    const tree = JSON.parse((await run(['scan', dir, '--json'])).out) as J;
    assert.deepEqual(pragmas(tree), [path.join(dir, 'include/tnn/common.h')]);
    // Only the file named: its headers are found through its ancestors' include/ folders.
    const alone = JSON.parse((await run(['scan', path.join(dir, 'src/a.cu'), '--json'])).out) as J;
    assert.deepEqual(pragmas(alone), pragmas(tree));
    // With the right flags in compile_commands.json: the same loops and pragmas.
    fs.writeFileSync(
      path.join(dir, 'compile_commands.json'),
      JSON.stringify([{ directory: dir, file: path.join(dir, 'src/a.cu'), arguments: ['nvcc', '-I', 'include', '-c', 'src/a.cu'] }]),
    );
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const flagged = JSON.parse((await run(['scan', path.join(dir, 'src/a.cu'), '--json'])).out) as J;
      assert.deepEqual(pragmas(flagged), pragmas(tree));
      assert.deepEqual(pragmas(JSON.parse((await run(['scan', dir, '--json'])).out) as J), pragmas(tree));
    } finally {
      process.chdir(cwd);
    }
  });

  test('directories are walked for .cu and .cuh; table output names loops', async () => {
    const file = tmpCu('b.cuh', SRC);
    fs.writeFileSync(path.join(path.dirname(file), 'ignored.txt'), 'x');
    const r = await run(['scan', path.dirname(file)]);
    assert.equal(r.code, 0);
    assert.match(r.out, /b\.cuh/);
    assert.match(r.out, /__global__ saxpy_tiled/);
    assert.match(r.out, /unroll 4 requested · trip count runtime/);
    assert.match(r.out, /1 files, 1 device functions, 2 loops/);
    assert.doesNotMatch(r.out, /ignored/);
  });

  test('missing path: exit 2 with a clear message', async () => {
    const r = await run(['scan', '/nonexistent/x.cu']);
    assert.equal(r.code, 2);
    assert.match(r.err, /no such file or directory: \/nonexistent\/x\.cu/);
  });

  test('unreadable file: exit 2', { skip: process.getuid?.() === 0 ? 'root can read any file' : false }, async () => {
    const file = tmpCu('c.cu', SRC);
    fs.chmodSync(file, 0o000);
    const r = await run(['scan', file]);
    assert.equal(r.code, 2);
    assert.match(r.err, /cannot read/);
  });

  test('directory without CUDA files, bad option, no args, unknown command: exit 2', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-empty-'));
    assert.equal((await run(['scan', dir])).code, 2);
    assert.equal((await run(['scan', '--nope', dir])).code, 2);
    assert.equal((await run(['scan'])).code, 2);
    assert.equal((await run(['frobnicate'])).code, 2);
    assert.equal((await run(['--help'])).code, 0);
  });

  test('--strict exits 1 when a finding exists', async () => {
    const file = tmpCu('d.cu', '__global__ void k(int n) {\n#pragma unroll\n  n++;\n}\n');
    assert.equal((await run(['scan', file, '--strict'])).code, 1);
  });
});

describe('unroll-lens command line', () => {
  test('no arguments: usage on stderr, exit 2; --help / -h: usage on stdout, exit 0', async () => {
    const none = await run([]);
    assert.equal(none.code, 2);
    assert.equal(none.out, '');
    assert.match(none.err, /^Usage: unroll-lens <command>/);
    for (const h of ['--help', '-h']) {
      const r = await run([h]);
      assert.equal(r.code, 0);
      assert.match(r.out, /^Usage: unroll-lens <command>/);
      for (const c of COMMANDS) assert.match(r.out, new RegExp(`^  ${c.name} `, 'm'));
      assert.equal(r.err, '');
    }
  });

  test('--version prints the package.json version, exit 0', async () => {
    const version = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version;
    const r = await run(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.out, `unroll-lens ${version}\n`);
  });

  test('unknown command or top-level option: exit 2 naming it', async () => {
    const c = await run(['frobnicate']);
    assert.equal(c.code, 2);
    assert.match(c.err, /unknown command 'frobnicate'/);
    const o = await run(['--frob']);
    assert.equal(o.code, 2);
    assert.match(o.err, /unknown option '--frob'/);
  });

  for (const c of COMMANDS) {
    test(`${c.name} --help / -h: its options and exit codes on stdout, exit 0`, async () => {
      for (const h of ['--help', '-h']) {
        const r = await run([c.name, h]);
        assert.equal(r.code, 0, r.err);
        assert.match(r.out, new RegExp(`^Usage: unroll-lens ${c.name} `));
        for (const name of Object.keys(c.options)) assert.match(r.out, new RegExp(`--${name}\\b`));
        assert.match(r.out, /Exit codes:\n {2}0 /);
        assert.match(r.out, /^ {2}2 /m);
      }
    });

    test(`${c.name}: unknown option → exit 2 with a message naming it`, async () => {
      for (const bad of ['--nope', '--nope=1', '-x']) {
        const r = await run([c.name, bad, 'file.cu']);
        assert.equal(r.code, 2);
        assert.match(r.err, new RegExp(`unknown option '${bad.replace(/=.*/, '')}' for ${c.name}`));
        assert.match(r.err, new RegExp(`unroll-lens ${c.name} --help`));
      }
    });

    test(`${c.name}: every option parses as --opt v and --opt=v; switches take no value`, () => {
      for (const [name, spec] of Object.entries(c.options)) {
        if (spec.type === 'boolean') {
          assert.deepEqual(parseCommandLine(c.name, c.options, ['f.cu', `--${name}`]), {
            options: { [name]: true },
            positionals: ['f.cu'],
          });
          assert.throws(() => parseCommandLine(c.name, c.options, [`--${name}=yes`]), UsageError);
        } else {
          const spaced = parseCommandLine(c.name, c.options, [`--${name}`, 'v 1', 'f.cu']);
          assert.deepEqual(spaced, { options: { [name]: spec.type === 'list' ? ['v 1'] : 'v 1' }, positionals: ['f.cu'] });
          if (spec.type === 'list') {
            // a list option keeps every occurrence, in order
            assert.deepEqual(parseCommandLine(c.name, c.options, [`--${name}`, 'a', 'f.cu', `--${name}=b`]), {
              options: { [name]: ['a', 'b'] },
              positionals: ['f.cu'],
            });
          }
          assert.deepEqual(parseCommandLine(c.name, c.options, ['f.cu', `--${name}=v 1`]), spaced);
          assert.throws(() => parseCommandLine(c.name, c.options, ['f.cu', `--${name}`]), new RegExp(`--${name} needs a value`));
        }
      }
    });
  }
});

describe('docs/cli.md', () => {
  test('shows the real --help of unroll-lens and of every command', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    const fix = 'docs/cli.md is out of date: paste the output of `node bin/unroll-lens.js [command] --help` after `npm run build`';
    assert.ok(doc.includes('$ npx unroll-lens --help\n' + usage()), fix);
    for (const c of COMMANDS) assert.ok(doc.includes(`$ npx unroll-lens ${c.name} --help\n${c.help()}`), `${c.name}: ${fix}`);
  });

  test('the scan examples are excerpts of real runs on cuda-samples/', async () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    const cwd = process.cwd();
    process.chdir(REPO_ROOT); // the examples show paths relative to the repository
    try {
      const json = await run(['scan', 'cuda-samples/matmul_unroll.cu', 'cuda-samples/linear_small.cu', '--json']);
      type Scan = { files: { path: string; kernels: { name: string }[] }[] };
      const example = JSON.parse(/```json\n(\{"files".*?)\n```/s.exec(doc)![1]) as Scan;
      const real = JSON.parse(json.out) as Scan;
      for (const f of example.files) {
        const rf = real.files.find(x => x.path === f.path);
        for (const k of f.kernels)
          assert.deepEqual(
            k,
            rf?.kernels.find(x => x.name === k.name),
            `${f.path} ${k.name}`,
          );
      }
      const table = (await run(['scan', 'cuda-samples/matmul_unroll.cu'])).out.split('\n');
      const shown = /An excerpt of `npx unroll-lens scan cuda-samples\/matmul_unroll\.cu`:\n\n```text\n(.*?)\n```/s
        .exec(doc)![1]
        .split('\n');
      for (const line of shown.filter(l => l !== '  …')) assert.ok(table.includes(line), `not in the real table: ${line}`);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('command-line parser', () => {
  const options = { args: { type: 'string', help: '' }, json: { type: 'boolean', help: '' } } as const;
  const parse = (argv: string[]) => {
    const p = parseCommandLine('bench', options, argv);
    assert.notEqual(p, 'help');
    return p as Exclude<typeof p, 'help'>;
  };

  test('a value may start with a dash; = keeps everything after the first =; last repeat wins', () => {
    assert.deepEqual(parseCommandLine('bench', options, ['--args', '--size 2048', 'f.cu']), {
      options: { args: '--size 2048' },
      positionals: ['f.cu'],
    });
    assert.deepEqual(parse(['--args=-n=3']).options, { args: '-n=3' });
    assert.deepEqual(parse(['--args=']).options, { args: '' });
    assert.deepEqual(parse(['--args', 'a', '--args', 'b']).options, { args: 'b' });
  });

  test('-- ends the options; - is a file; --help as an option value is a value', () => {
    assert.deepEqual(parseCommandLine('scan', options, ['--json', '--', '--weird.cu', '-']), {
      options: { json: true },
      positionals: ['--weird.cu', '-'],
    });
    assert.deepEqual(parse(['-']).positionals, ['-']);
    assert.equal(parseCommandLine('bench', options, ['--help']), 'help');
    assert.equal(parseCommandLine('bench', options, ['f.cu', '-h']), 'help');
    assert.deepEqual(parse(['--args', '--help']).options, { args: '--help' });
  });

  test('numeric options are checked like the setting they stand for, in both forms', () => {
    assert.equal(numberOption('samples', undefined, SETTINGS.profile.samples), DEFAULT_SETTINGS.profile.samples);
    assert.equal(numberOption('samples', '40', SETTINGS.profile.samples), 40);
    assert.equal(numberOption('jobs', '0', SETTINGS.jobs), 0, '0 = cores, as in the setting');
    assert.equal(numberOption('timeout', '2.5', SETTINGS.profile.timeoutSeconds), 2.5);
    for (const bad of ['0', '-1', '2.5', 'abc', '', ' ']) {
      assert.throws(() => numberOption('samples', bad, SETTINGS.profile.samples), /--samples takes an integer from 1 to 1000/);
    }
    assert.throws(() => numberOption('timeout', '0', SETTINGS.profile.timeoutSeconds), /--timeout takes a number from 1 to 86400, not '0'/);
    // one spelling (issue 37): hex, exponents, signs, padding and a trailing dot are refused, as for line numbers
    for (const bad of ['0x10', '1e3', '1E1', '+5', ' 40', '40 ', '4.', '.5', '0b11', '0o7', '1_000', 'Infinity']) {
      assert.throws(() => numberOption('samples', bad, SETTINGS.profile.samples), new RegExp(`not '${bad.replace(/[.+]/g, '\\$&')}'`));
      assert.throws(() => numberOption('timeout', bad, SETTINGS.profile.timeoutSeconds), /--timeout takes a number/);
    }
    assert.equal(numberOption('timeout', '0.5', { ...SETTINGS.profile.timeoutSeconds, minimum: 0 }), 0.5);
    for (const bad of ['0x10', '1e3', '+3', ' 3']) assert.throws(() => elementsOption(bad), /--elements takes a positive whole number/);
    assert.equal(elementsOption('1024'), 1024);
  });
});

describe('subcommand options reach their checks (both forms), before any compile', () => {
  const cliff = path.join(SAMPLES, 'icache_cliff.cu');
  const cases: [string[], RegExp][] = [
    [['bench', cliff, '--loop', '72', '--samples', '0'], /--samples takes an integer from 1 to 1000, not '0'/],
    [['bench', cliff, '--loop', '72', '--samples=x'], /--samples takes an integer from 1 to 1000, not 'x'/],
    [['bench', cliff, '--loop', '72', '--warmup=-1'], /--warmup takes an integer from 0 to 1000/],
    [['bench', cliff, '--loop=72', '--timeout', '0'], /--timeout takes a number from 1 to 86400/],
    // issue 10: every numeric and enum option names the bad value; exit 2 before any compile
    [['bench', cliff, '--loop', '72', '--timeout', '-1'], /--timeout takes a number from 1 to 86400, not '-1'/],
    [['bench', cliff, '--loop', '72', '--timeout', '1e10'], /--timeout takes a number from 1 to 86400, not '1e10'/],
    [['bench', cliff, '--loop', '72', '--warmup', 'abc'], /--warmup takes an integer from 0 to 1000, not 'abc'/],
    [['bench', cliff, '--loop', '72', '--samples', '2.5'], /--samples takes an integer from 1 to 1000, not '2.5'/],
    [
      ['bench', cliff, '--loop', '72', '--factors', '100000000000000000000000'],
      /unroll factor '100000000000000000000000' is out of range: .*1 to 4096/,
    ],
    [['sass', cliff, '--factors', '1,4097'], /unroll factor '4097' is out of range/],
    [['sass', cliff, '--factors', '2.5'], /bad unroll factor '2\.5'/],
    [['sass', cliff, '--factors', '1e3'], /bad unroll factor '1e3'/],
    [['sass', cliff, '--nvcc-timeout', '0'], /--nvcc-timeout takes a number from 1 to 86400, not '0'/],
    [['sass', cliff, '--disasm-timeout', 'abc'], /--disasm-timeout takes a number from 1 to 86400, not 'abc'/],
    [['bench', cliff, '--loop', '72', '--nvcc-timeout', '-5'], /--nvcc-timeout takes a number from 1 to 86400/],
    [['sweep', cliff, '--disasm-timeout', '1e9'], /--disasm-timeout takes a number from 1 to 86400/],
    [['sweep', cliff, '--jobs', '-1'], /--jobs takes an integer from 0 to 64, not '-1'/],
    [['sweep', cliff, '--samples', '0'], /--samples takes an integer from 1 to 1000, not '0'/],
    [['sweep', cliff, '--factors', '99999999'], /out of range/],
    [['sweep', cliff, '--strategy', 'random'], /--strategy takes exhaustive or coordinate, not 'random'/],
    [['sweep', cliff, '--clock-control', 'max'], /--clock-control takes base or none, not 'max'/],
    [['bench', cliff, '--loop', '72', '--clock-control', 'max'], /--clock-control takes base or none, not 'max'/],
    [['bench', cliff, '--loop=72', '--clock-control=max'], /--clock-control takes base or none/],
    [['bench', cliff, '--loop', '72', '--factors', '1,x'], /bad unroll factor 'x'/],
    [['bench', cliff, '--loop=72', '--factors=0'], /bad unroll factor '0'/],
    [['bench', cliff, '--loop', '72', '--arch', '90'], /--arch takes an sm_XX architecture/],
    [['bench', cliff, '--loop', 'x'], /--loop takes 1-based line numbers/],
    [['bench', cliff, '--loop=3,99'], /no loop in device code at line 3 of .*icache_cliff\.cu \(loops at 70, 72\)/],
    [['bench', cliff], /bench needs --loop LINE/],
    // one bench is one kernel's sweep: its loops are tied to one factor, so they must share the kernel
    [
      ['bench', path.join(SAMPLES, 'matmul_unroll.cu'), '--loop', '51,68'],
      /the loop at line 68 belongs to matmul_unroll2 \(line \d+\), not to matmul_basic/,
    ],
    [['bench', cliff, 'other.cu', '--loop', '72'], /bench takes one file/],
    [['bench', '--loop', '72'], /bench needs a \.cu file with main\(\)/],
    [['bench', cliff, '--loop', '72', '--gpus', 'gpu0'], /--gpus: 'gpu0' is not a CUDA device index/],
    [['bench', cliff, '--loop', '72', '--gpus=0,1,0'], /--gpus: GPU 0 is listed twice/],
    [['bench', cliff, '--loop', '72', '--gpus='], /--gpus takes all or a comma list of CUDA device indices/],
    [['bench', cliff, '--loop', '72', '--fresh=yes'], /--fresh takes no value/],
    [['bench', cliff, '--loop', '72', '--ncu-passes', 'all'], /--ncu-passes takes combined or split, not 'all'/],
    [['bench', cliff, '--loop', '72', '--profiles-per-gpu', '9'], /--profiles-per-gpu takes an integer from 1 to 8, not '9'/],
    [['sweep', cliff, '--gpus', 'x'], /--gpus: 'x' is not a CUDA device index/],
    [['sweep', cliff, '--gpus=0,1,0'], /--gpus: GPU 0 is listed twice/],
    [['sweep', cliff, '--gpus='], /--gpus takes all or a comma list of CUDA device indices/],
    [['sweep', cliff, '--quiet=yes'], /--quiet takes no value/],
    [['sweep', cliff, '--fresh=1'], /--fresh takes no value/],
    [['sass', cliff, '--jobs', '-1'], /--jobs takes an integer from 0 to 64, not '-1'/],
    [['sass', cliff, '--jobs=many'], /--jobs takes an integer from 0 to 64/],
    [['sass', cliff, '--arch=sm90'], /--arch takes an sm_XX architecture/],
    [['sass', cliff, '--loop', '0'], /--loop takes 1-based line numbers/],
    [['sass', cliff, '--loop', '72', '--warps-per-sm', '65'], /--warps-per-sm takes an integer from 0 to 64, not '65'/],
    [['sass', cliff, '--loop', '72', '--warps-per-sm=2.5'], /--warps-per-sm takes an integer from 0 to 64, not '2\.5'/],
    [['sass', cliff, '--warps-per-sm', '-1'], /--warps-per-sm takes an integer from 0 to 64, not '-1'/],
    [['sass', cliff, '--warps-per-sm', '8'], /--warps-per-sm goes with --loop/],
    [['sass', cliff, '--loop', '72', '--listing', '--warps-per-sm', '8'], /--warps-per-sm goes with --loop .*not with --listing/],
    [['sass', cliff, '--factors='], /empty factor list/],
    // issue 43: a factor left out between commas was dropped silently
    [['sass', cliff, '--loop', '72', '--factors', '8,,4'], /an empty factor between commas in '8,,4'/],
    [['bench', cliff, '--loop', '72', '--factors', '8,4,'], /an empty factor between commas in '8,4,'/],
    [['sweep', cliff, '--factors', ',8'], /an empty factor between commas in ',8'/],
    // issue 43: Markdown was handed to nvcc, which answered with a preprocessing error
    [['sass', path.join(REPO_ROOT, 'README.md')], /README\.md is not CUDA source: give a \.cu file/],
    [['bench', path.join(REPO_ROOT, 'README.md'), '--loop', '2'], /README\.md is not CUDA source/],
    [['sass'], /sass needs a \.cu file/],
    [['sass', cliff, cliff], /sass takes one file/],
    [['stalls'], /stalls needs a \.ncu-rep report/],
    [['stalls', 'a.csv', 'b.csv'], /stalls takes one report or CSV file/],
    [['stalls', '/nonexistent/r.csv'], /no such file: \/nonexistent\/r\.csv/],
    [['scan'], /scan needs at least one file or directory/],
  ];
  for (const [args, message] of cases) {
    test(`${args.map(a => a.replace(SAMPLES + '/', '')).join(' ')} → exit 2`, async () => {
      const r = await run(args);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, message);
      assert.equal(r.out, '');
    });
  }

  test('stalls reads a raw-page CSV (--json after the file or before it)', async () => {
    const csv = path.join(REPO_ROOT, 'test', 'fixtures', 'ncu', 'hot-loop-32KiB.raw.csv');
    const a = await run(['stalls', csv, '--json']);
    const b = await run(['stalls', '--json', csv]);
    assert.equal(a.code, 0, a.err);
    assert.equal(a.out, b.out);
    assert.ok(JSON.parse(a.out).kernels.length > 0);
    const table = await run(['stalls', csv]);
    assert.equal(table.code, 0);
    assert.match(table.out, /median duration/);
  });
});
