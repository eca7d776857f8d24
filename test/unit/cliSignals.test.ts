// SIGTERM and SIGHUP cancel `sass` and `bench` as Ctrl-C does (issue 10): the CLI exits 130,
// the tool it was running (a fake slow nvcc, or a program behind a fake slow launcher, each
// recording its pid and its child's) is gone, and no temp folder is left behind.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const FAKE_GPU = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-gpu');
const SRC = `#include <cstdio>
__global__ void k(float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] *= 2.0f;
}
int main() { k<<<1, 1>>>(nullptr, 0); printf("kernel=k checksum=0\\n"); return 0; }
`;

/** A shell script that records its pid and its sleeping child's in `pids`, then waits. */
function slowScript(file: string, pids: string, versionLine?: string): void {
  fs.writeFileSync(
    file,
    '#!/bin/sh\n' +
      (versionLine ? `case "$1" in --version) echo "${versionLine}"; exit 0;; --list-gpu-code) echo sm_90; exit 0;; esac\n` : '') +
      `sleep 120 &\necho "$$ $!" >> "${pids}"\nwait\n`,
    { mode: 0o755 },
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 50));
  }
}

/** Everything under `dir` whose name marks a temp folder of ours. */
function leftovers(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter(
    p => /\.tmp-|unroll-lens-/.test(path.basename(p)) && path.basename(p) !== '.unroll-lens-cache',
  );
}

async function cancelDuring(args: string[], setup: (root: string, bin: string, pids: string) => void, signal: NodeJS.Signals) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sig-'));
  const bin = path.join(root, 'bin');
  const tmp = path.join(root, 'tmp');
  const cache = path.join(root, 'cache');
  for (const d of [bin, tmp, cache]) fs.mkdirSync(d);
  const pids = path.join(root, 'pids');
  setup(root, bin, pids);
  const file = path.join(root, 'k.cu');
  fs.writeFileSync(file, SRC);
  const child = spawn(process.execPath, [CLI, ...args.map(a => a.replace('{file}', file).replace('{root}', root))], {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, TMPDIR: tmp, XDG_CACHE_HOME: cache },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', d => (err += d));
  const exited = new Promise<number | null>(r => child.on('exit', code => r(code)));
  try {
    await until('the slow tool to start', () => fs.existsSync(pids) && fs.readFileSync(pids, 'utf8').trim() !== '', 120_000);
  } catch (e) {
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}; stderr: ${err}`);
  }
  const started = fs.readFileSync(pids, 'utf8').trim().split(/\s+/).map(Number);
  assert.ok(started.every(alive));
  child.kill(signal);
  const code = await exited;
  assert.equal(code, 130, err);
  await until('the tool and its child to be gone', () => !started.some(alive), 5000);
  assert.deepEqual([...leftovers(tmp), ...leftovers(cache)], [], 'no temp folder left');
  fs.rmSync(root, { recursive: true, force: true });
}

describe('SIGTERM / SIGHUP cancel like Ctrl-C', () => {
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    test(`sass: ${signal} while nvcc runs → exit 130, nvcc and its child killed, no temp folder`, async () => {
      await cancelDuring(
        ['sass', '{file}'],
        (_root, bin, pids) => slowScript(path.join(bin, 'nvcc'), pids, 'Cuda compilation tools, release 13.0, V13.0.48'),
        signal,
      );
    });
  }

  test('bench: SIGTERM while the program runs → exit 130, program killed, no temp folder', async t => {
    if (!fs.existsSync('/usr/local/bin/nvcc') && !process.env.PATH?.split(':').some(d => fs.existsSync(path.join(d, 'nvcc'))))
      return t.skip('no nvcc');
    await cancelDuring(
      ['bench', '{file}', '--loop', '3', '--factors', '1', '--launcher', '{root}/slow-launcher', '--arch', 'sm_90'],
      (root, bin, pids) => {
        slowScript(path.join(root, 'slow-launcher'), pids);
        fs.symlinkSync(path.join(FAKE_GPU, 'ncu'), path.join(bin, 'ncu'));
      },
      'SIGTERM',
    );
  });
});
