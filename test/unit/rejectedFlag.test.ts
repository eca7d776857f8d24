// A compile flag that nvcc, ptxas or the host compiler rejects is named, with where it came from,
// and is bad input (exit 65), not an internal error (issue 23: `bench` crashed with exit 70 when the
// file as written did not compile because of a flag; `sass` only printed the tool's message).
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { parseNvccOutput } from '../../src/engine/toolchain/nvccErrors';
import { describeRejectedFlag, rejectedOption } from '../../src/engine/toolchain/rejectedFlag';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { main } from '../../src/cli/main';
import { EXIT } from '../../src/cli/io';
import { REPO_ROOT } from './helpers';

let skip: string | false = false;
before(async () => {
  try {
    await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

describe('naming the flag a tool rejected (recorded stderr of nvcc 13.0, ptxas and gcc)', () => {
  const flags = {
    args: ['-DBLOCK=4', '-Xptxas', '--warn-on-spills,--bogus', '-std=c++26', '-Xcompiler', '-O2,-mno-such-thing', '--maxrregcount=abc'],
    source: 'compile_commands.json (/p/compile_commands.json)',
  };
  for (const [stderr, flag, tool] of [
    ["ptxas fatal   : Unknown option '-bogus'\n", '-Xptxas --bogus', 'ptxas'],
    ["nvcc fatal   : Value 'c++26' is not defined for option 'std'\n", '-std=c++26', 'nvcc'],
    ['gcc: error: unrecognized command-line option ‘-mno-such-thing’\n', '-Xcompiler -mno-such-thing', 'gcc'],
    ["ptxas fatal   : Invalid value 'abc' for option 'maxrregcount'\n", '--maxrregcount=abc', 'ptxas'],
  ] as const) {
    test(`${stderr.trim()} → ${flag}`, () => {
      const messages = parseNvccOutput(stderr);
      assert.equal(messages[0]?.kind, 'flags');
      const text = describeRejectedFlag(messages, flags);
      assert.equal(
        text,
        `${tool} rejected the flag ${JSON.stringify(flag)} from ${flags.source} (${messages[0].message}); fix or remove it there`,
      );
    });
  }

  test('a message about no flag of ours still says which option the tool rejected; other errors name none', () => {
    assert.deepEqual(rejectedOption("Unknown option '-Xfoo'"), { option: '-Xfoo', value: null });
    assert.equal(
      describeRejectedFlag(parseNvccOutput("nvcc fatal   : Unknown option '-Xfoo'\n"), flags),
      "nvcc rejected a flag: Unknown option '-Xfoo'",
    );
    assert.equal(describeRejectedFlag(parseNvccOutput('k.cu(3): error: identifier "x" is undefined\n'), flags), null);
    assert.equal(rejectedOption(undefined as unknown as string), null);
  });

  test('settings nvccArgs ["-Xptxas", "--bogus"] never reach ptxas: dropped, named, with the reason', () => {
    const f = flagsFromSettings({ nvccArgs: ['-Xptxas', '--bogus', '-Xptxas=-v,--bogus2,-O2'] }, '/ws');
    assert.deepEqual(f.args, ['-Xptxas', '--opt-level=2']);
    assert.deepEqual(f.warnings, [
      'unrollLens nvccArgs: dropped "-Xptxas --bogus": --bogus is not on the ptxas allow-list',
      'unrollLens nvccArgs: dropped "-Xptxas=-v,--bogus2,-O2": --bogus2 is not on the ptxas allow-list',
    ]);
  });
});

const PROGRAM = `#include <cstdio>
__global__ void k(float *p) { for (int i = 0; i < 8; i++) p[i] *= 2; }
int main() { float *p; cudaMalloc(&p, 64); k<<<1, 1>>>(p); cudaDeviceSynchronize(); std::printf("ok\\n"); return 0; }
`;

/** Runs `unroll-lens <args>` in a project whose compile_commands.json gives m.cu `flags`, with a stand-in ncu on PATH. */
async function cli(flags: string, args: (file: string) => string[]) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-rejected-')));
  const file = path.join(dir, 'm.cu');
  fs.writeFileSync(file, PROGRAM);
  fs.writeFileSync(
    path.join(dir, 'compile_commands.json'),
    JSON.stringify([{ directory: dir, file: 'm.cu', command: `nvcc ${flags} -c m.cu` }]),
  );
  fs.mkdirSync(path.join(dir, 'bin'));
  // bench looks for ncu before it builds; this one is never reached when the file as written does not compile.
  fs.writeFileSync(path.join(dir, 'bin', 'ncu'), '#!/bin/sh\necho "stand-in ncu" >&2\nexit 1\n', { mode: 0o755 });
  // bench stops before building on a machine without a GPU: this stand-in nvidia-smi reports the recorded H200.
  const smi = path.join(REPO_ROOT, 'test', 'fixtures', 'nvidia-smi', 'h200-q-x.xml');
  fs.writeFileSync(
    path.join(dir, 'bin', 'nvidia-smi'),
    `#!/bin/sh\ncase "$1" in -q) cat '${smi}' ;; --version) echo 'NVIDIA-SMI 570.00' ;; *) echo '0, 9.0' ;; esac\n`,
    { mode: 0o755 },
  );
  const saved = { PATH: process.env.PATH, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
  process.env.PATH = `${path.join(dir, 'bin')}${path.delimiter}${process.env.PATH}`;
  process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
  let out = '';
  let err = '';
  try {
    const code = await main(args(file), { out: s => (out += s), err: s => (err += s), isTTY: false });
    return { code, out, err, db: path.join(dir, 'compile_commands.json') };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('unroll-lens with a flag nvcc rejects (real nvcc)', () => {
  test('bench: exit 65 naming the flag and its compile_commands.json, not "internal error" exit 70', async t => {
    if (skip) return t.skip(skip);
    const r = await cli('-std=c++26', f => ['bench', f, '--loop', '2']);
    assert.equal(r.code, EXIT.badInput, r.err);
    assert.doesNotMatch(r.err, /internal error/);
    assert.match(
      r.err,
      new RegExp(
        `m\\.cu as written does not compile \\(flags\\): nvcc rejected the flag "-std=c\\+\\+26" from compile_commands\\.json \\(${r.db.replace(/[.]/g, '\\.')}\\)`,
      ),
    );
  });

  test('sass: the same flag is named and the exit is 65; -Xptxas --bogus is dropped before nvcc and sass succeeds', async t => {
    if (skip) return t.skip(skip);
    const bad = await cli('-std=c++26', f => ['sass', f]);
    assert.equal(bad.code, EXIT.badInput, bad.err);
    assert.match(bad.err, /unroll-lens: nvcc rejected the flag "-std=c\+\+26" from compile_commands\.json/);
    const dropped = await cli('-Xptxas --bogus', f => ['sass', f]);
    assert.equal(dropped.code, EXIT.ok, dropped.err);
    assert.match(
      dropped.err,
      /dropped "-Xptxas --bogus" \(from .*compile_commands\.json, entry for .*m\.cu\): --bogus is not on the ptxas allow-list/,
    );
    assert.match(dropped.out, /^k\(float\*\)/m);
  });
});
