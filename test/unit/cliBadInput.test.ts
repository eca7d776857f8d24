// Bad input gets a clear answer (issue 10): --arch nvcc cannot build for, a --kernel the file does
// not have, a FIFO or /dev/zero named x.cu, a huge source, a quote or line break in a file name,
// and a hanging nvcc held to --nvcc-timeout with a message naming the tool, the limit and the file.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const SRC = `__global__ void scale(float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] *= 2.0f;
}
`;
let nvcc = true;
try {
  execFileSync('nvcc', ['--version'], { stdio: 'ignore' });
} catch {
  nvcc = false;
}

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function dir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bad-'));
}

describe('odd input files', () => {
  test('a FIFO or /dev/zero named x.cu: scan, sass and bench refuse it at once (exit 2) instead of hanging', t => {
    if (process.platform === 'win32') return t.skip('no FIFOs');
    const d = dir();
    const fifo = path.join(d, 'x.cu');
    execFileSync('mkfifo', [fifo]);
    const zero = path.join(d, 'zero.cu');
    fs.symlinkSync('/dev/zero', zero);
    for (const args of [
      ['scan', fifo],
      ['sass', fifo],
      ['bench', fifo, '--loop', '2'],
      ['scan', zero],
      ['sass', zero],
      ['sweep', zero],
    ]) {
      const r = cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(
        r.err,
        args[1] === fifo ? /x\.cu is a FIFO \(named pipe\), not a regular file/ : /zero\.cu is a character device, not a regular file/,
      );
    }
  });

  test('a source over 32 MiB is refused with its size', () => {
    const big = path.join(dir(), 'big.cu');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 33 * 1024 * 1024);
    for (const c of ['scan', 'sass']) {
      const r = cli([c, big]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /big\.cu is 33\.0 MiB; source files over 32 MiB are refused/);
    }
  });

  test('a quote or a line break in the file name: sass builds it (was: a ptxas parse error)', { skip: !nvcc && 'no nvcc' }, () => {
    const d = dir();
    for (const name of ['a"b.cu', 'a\nb.cu']) {
      const file = path.join(d, name);
      fs.writeFileSync(file, SRC);
      const r = cli(['sass', file, '--loop', '2', '--factors', '1,4', '--arch', 'sm_90', '--json'], {
        XDG_CACHE_HOME: path.join(d, 'cache'),
      });
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /its variants are built as a_b\.cu/);
      const j = JSON.parse(r.out);
      assert.equal(j.kernels[0].name, '_Z5scalePfi');
      assert.deepEqual(
        j.loop.variants.map((v: { status: string }) => v.status),
        ['ok', 'ok'],
      );
    }
  });
});

describe('--arch and --kernel name what exists', { skip: !nvcc && 'no nvcc' }, () => {
  test('--arch sm_999: exit 2 naming it and the architectures nvcc supports (was: exit 1 with a stray ": ")', () => {
    const file = path.join(dir(), 'k.cu');
    fs.writeFileSync(file, SRC);
    const r = cli(['sass', file, '--arch', 'sm_999']);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--arch sm_999: nvcc [\d.]+ cannot build for it; it supports (sm_\d+, )+sm_\d+/);
    assert.doesNotMatch(r.err, /^ {2}: /m);
    assert.equal(r.out, '');
  });

  test('--kernel nosuchkernel: exit 2 listing the kernels the file has (was: all "-", exit 0)', () => {
    const d = dir();
    const file = path.join(d, 'k.cu');
    fs.writeFileSync(file, SRC);
    const r = cli(['sass', file, '--loop', '2', '--factors', '1', '--kernel', 'nosuchkernel', '--arch', 'sm_90'], {
      XDG_CACHE_HOME: path.join(d, 'cache'),
    });
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--kernel nosuchkernel: no kernel of that name in .*k\.cu .*; its kernels: scale\(float\*, int\)/);
    // a part of the demangled name still selects it
    const ok = cli(['sass', file, '--loop', '2', '--factors', '1', '--kernel', 'scale', '--arch', 'sm_90'], {
      XDG_CACHE_HOME: path.join(d, 'cache'),
    });
    assert.equal(ok.code, 0, ok.err);
  });
});

describe('tool time limits', () => {
  test('a hanging nvcc is killed after --nvcc-timeout; the message names nvcc, the limit and the file', () => {
    const d = dir();
    const bin = path.join(d, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(
      path.join(bin, 'nvcc'),
      '#!/bin/sh\ncase "$1" in --version) echo "Cuda compilation tools, release 13.0, V13.0.48"; exit 0;; esac\nexec sleep 60\n',
      { mode: 0o755 },
    );
    const file = path.join(d, 'k.cu');
    fs.writeFileSync(file, SRC);
    const started = Date.now();
    const r = cli(['sass', file, '--nvcc-timeout', '1'], { PATH: `${bin}:${process.env.PATH}`, XDG_CACHE_HOME: path.join(d, 'cache') });
    assert.ok(Date.now() - started < 30_000, 'killed after about a second, not 300 s');
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /nvcc timed out after 1 s compiling .*k\.cu .*raise --nvcc-timeout/);
    assert.match(r.err, /does not compile \(timeout\):\n {2}nvcc ran longer than 1 s \(--nvcc-timeout\) and was killed/);
  });
});

describe('bench and compare on a machine without a GPU (issue 43)', { skip: !nvcc && 'no nvcc' }, () => {
  // Was: a warning, then every variant built and run for minutes, each row the raw "CUDA driver
  // version is insufficient" error. Now: exit 2 at once, naming what works without a GPU.
  const program = `#include <cstdio>
__global__ void scale(float* y) { for (int i = 0; i < 8; ++i) y[i] *= 2.0f; }
int main() { std::printf("checksum=1\\n"); return 0; }
`;
  // PATH without nvidia-smi: the test machine has none, and a GPU host's must not count here.
  const noGpu = () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-nogpu-bin-'));
    for (const tool of ['nvcc', 'ncu']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (found) fs.symlinkSync(found, path.join(bin, tool));
    }
    return { PATH: `${bin}:/usr/bin:/bin`, XDG_CACHE_HOME: path.join(bin, 'cache'), CUDA_HOME: '' };
  };

  for (const args of [(f: string) => ['bench', f, '--loop', '2'], (f: string) => ['compare', f, '--kernels', 'scale']]) {
    test(`${args('f.cu')[0]}: exit 2 before any build, naming sass and sweep --static`, () => {
      const d = dir();
      const file = path.join(d, 'p.cu');
      fs.writeFileSync(file, program);
      const env = noGpu();
      const r = cli(args(file), env);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /no GPU on this machine \(nvidia-smi lists none\)/);
      assert.match(r.err, new RegExp(`unroll-lens sass ${file.replace(/[.]/g, '\\.')}( --loop 2)?\` shows the SASS of each unroll factor`));
      assert.match(r.err, /sweep .* --static` picks a factor by a stated static rule/);
      assert.ok(
        !fs.existsSync(env.XDG_CACHE_HOME) ||
          !fs.readdirSync(env.XDG_CACHE_HOME, { recursive: true }).some(f => String(f).endsWith('.cubin')),
        'nothing built',
      );
    });
  }
});
