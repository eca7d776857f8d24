// Issue 23, leaks: a signal to `unroll-lens sass` while nvcc runs leaves no process and no temp
// file behind. SIGTERM used to leave nvcc's tmpxft_* files in $TMPDIR; SIGKILL left nvcc and the
// host compiler (cicc, cc1plus, ptxas) running. Each case runs the real CLI with TMPDIR set to a
// fresh folder, finds what it started by that folder in /proc/PID/environ (every descendant
// inherits it, whatever group or session it moves to), and checks a canary file outside.
// A fake slow nvcc (temp files, a child, a grandchild in a session of its own) runs anywhere;
// the real nvcc, when installed, on a kernel whose full unroll takes it long enough to interrupt.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { contents, fakeSlowTool, HAS_SETSID, killAll, processesWithEnv, started, until } from './leakHelpers';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const SIMPLE = '__global__ void k(float* y, int n) {\n  for (int i = 0; i < n; ++i) y[i] *= 2.0f;\n}\n';
/** Fully unrolled, 500 iterations of a transcendental chain: nvcc 13's cicc needs ~40 s for it. */
const SLOW = `__global__ void slow(float *out, const float *in, int n) {
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < 500; ++i) acc = acc * in[(i * 7) % n] + sinf(acc + i);
  out[threadIdx.x] = acc;
}
`;
const REAL_NVCC = (process.env.PATH ?? '')
  .split(path.delimiter)
  .concat('/usr/local/cuda/bin')
  .map(d => path.join(d, 'nvcc'))
  .find(p => fs.existsSync(p));

interface Run {
  root: string;
  tmp: string;
  record: string;
  /** What identifies the CLI's descendants (and its watchdog) in /proc. */
  marker: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  child: ReturnType<typeof spawn>;
  stderr: () => string;
  canary: string;
}

function startCli(source: string, fakeNvcc: boolean): Run {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-leak-cli-'));
  const [bin, tmp, cache] = ['bin', 'tmp', 'cache'].map(d => path.join(root, d));
  for (const d of [bin, tmp, cache]) fs.mkdirSync(d);
  const record = path.join(root, 'started');
  if (fakeNvcc) fakeSlowTool(path.join(bin, 'nvcc'), record);
  const canary = path.join(root, 'canary.txt');
  fs.writeFileSync(canary, 'canary');
  fs.writeFileSync(path.join(root, 'k.cu'), source);
  const child = spawn(process.execPath, [CLI, 'sass', path.join(root, 'k.cu'), '--arch', 'sm_90'], {
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}`, TMPDIR: tmp, XDG_CACHE_HOME: cache },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', d => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(r =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { root, tmp, record, marker: `TMPDIR=${tmp}`, exited, child, stderr: () => err, canary };
}

/** After the signal: nothing carrying the run's TMPDIR alive, the temp folder empty, the canary intact. */
async function assertNothingLeft(r: Run): Promise<void> {
  try {
    await until(
      'no process of the CLI left',
      () => processesWithEnv(r.marker).length === 0,
      4000,
      () => JSON.stringify(processesWithEnv(r.marker)),
    );
    await until(
      'an empty temp folder',
      () => contents(r.tmp).length === 0,
      4000,
      () => contents(r.tmp).join(', '),
    );
    assert.equal(fs.readFileSync(r.canary, 'utf8'), 'canary');
  } finally {
    killAll(processesWithEnv(r.marker).map(p => p.pid));
  }
  fs.rmSync(r.root, { recursive: true, force: true });
}

async function waitForBuild(r: Run, ready: () => boolean): Promise<void> {
  try {
    await until('nvcc to be running', ready, 60_000, r.stderr);
  } catch (e) {
    r.child.kill('SIGKILL');
    throw e;
  }
}

describe('sass: signals during a build leave no process and no temp file', { concurrency: true }, () => {
  test('SIGTERM while a (fake) nvcc runs: exit 130, nvcc, its child and its setsid grandchild gone, no tmpxft_* file', async () => {
    const r = startCli(SIMPLE, true);
    await waitForBuild(r, () => started(r.record).length > 0);
    const [run] = started(r.record);
    assert.ok(
      fs.readdirSync(run.tmp).some(f => f.startsWith('tmpxft_')),
      'the fake nvcc wrote its temp files',
    );
    r.child.kill('SIGTERM');
    assert.equal((await r.exited).code, 130, r.stderr());
    await assertNothingLeft(r);
  });

  test('SIGKILL while a (fake) nvcc runs: within seconds nvcc, its child and grandchildren are gone, and the temp folder empty', async () => {
    const r = startCli(SIMPLE, true);
    await waitForBuild(
      r,
      () => started(r.record).length > 0 && processesWithEnv(r.marker).filter(p => p.comm === 'sleep').length >= (HAS_SETSID ? 2 : 1),
    );
    r.child.kill('SIGKILL');
    assert.equal((await r.exited).signal, 'SIGKILL');
    await assertNothingLeft(r);
  });

  const COMPILERS = new Set(['cicc', 'cudafe++', 'cc1plus', 'ptxas', 'nvlink', 'fatbinary']);
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    test(`${signal} while the real nvcc runs cicc: no nvcc, cicc, cc1plus or ptxas left, no tmpxft_* file`, async t => {
      if (!REAL_NVCC) return t.skip('nvcc is not installed (PATH, /usr/local/cuda/bin): the fake-nvcc cases above cover the mechanism');
      const r = startCli(SLOW, false);
      await waitForBuild(r, () => processesWithEnv(r.marker).some(p => COMPILERS.has(p.comm)));
      r.child.kill(signal);
      const end = await r.exited;
      if (signal === 'SIGTERM') assert.equal(end.code, 130, r.stderr());
      await assertNothingLeft(r);
    });
  }
});
