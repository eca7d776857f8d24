import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runProcess } from '../../src/engine/toolchain/process';
import { findTool, MissingToolError } from '../../src/engine/toolchain/discover';
import { archOf, computeCapabilityFromName, parseComputeCapQuery, parseNvidiaSmiXml, readGpus } from '../../src/engine/toolchain/gpu';
import { REPO_ROOT } from './helpers';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pid: number, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await new Promise(r => setTimeout(r, 50));
  }
  return !alive(pid);
}

describe('process runner', () => {
  test('argument arrays reach the program verbatim (no shell)', async () => {
    const r = await runProcess(process.execPath, [
      '-e',
      'console.log(JSON.stringify(process.argv.slice(1)))',
      '$(echo pwned)',
      'a b',
      '"q"; rm -rf /',
    ]);
    assert.equal(r.exitCode, 0);
    assert.deepEqual(JSON.parse(r.stdout), ['$(echo pwned)', 'a b', '"q"; rm -rf /']);
  });

  test('timeout kills the whole process tree', async () => {
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-proc-')), 'grandchild.pid');
    // child spawns a grandchild that would outlive it, then both sleep
    const script = `const cp=require('child_process');const g=cp.spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});require('fs').writeFileSync(${JSON.stringify(pidFile)},String(g.pid));setInterval(()=>{},1000);`;
    const r = await runProcess(process.execPath, ['-e', script], { timeoutMs: 1500 });
    assert.equal(r.timedOut, true);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.ok(await waitGone(grandchild), `grandchild ${grandchild} survived the timeout`);
  });

  test('cancellation kills the tree and reports cancelled', async () => {
    const ac = new AbortController();
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-proc-')), 'grandchild.pid');
    const script = `const cp=require('child_process');const g=cp.spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});require('fs').writeFileSync(${JSON.stringify(pidFile)},String(g.pid));setInterval(()=>{},1000);`;
    const p = runProcess(process.execPath, ['-e', script], { signal: ac.signal });
    // The file can exist before its pid is written: wait for the number (pid 0 is our own group).
    const pid = async () => Number(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : '');
    while (!(await pid())) await new Promise(r => setTimeout(r, 20));
    ac.abort();
    const r = await p;
    assert.equal(r.cancelled, true);
    assert.ok(await waitGone(await pid()));
  });

  test('a missing executable is a spawn error, not a throw', async () => {
    const r = await runProcess('/nonexistent/tool', ['--version']);
    assert.ok(r.spawnError, JSON.stringify(r));
    assert.equal(r.exitCode, null);
  });
});

describe('tool discovery', () => {
  const fakeTool = (dir: string, name: string, versionText: string) => {
    fs.mkdirSync(dir, { recursive: true });
    const p = path.join(dir, name);
    fs.writeFileSync(p, `#!/bin/sh\necho "${versionText}"\n`, { mode: 0o755 });
    return p;
  };

  test('settings beat CUDA_HOME beat PATH; the version is read', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-disc-'));
    const viaSetting = fakeTool(path.join(root, 's'), 'nvcc', 'Cuda compilation tools, release 12.9, V12.9.1');
    fakeTool(path.join(root, 'home', 'bin'), 'nvcc', 'Cuda compilation tools, release 13.0, V13.0.48');
    fakeTool(path.join(root, 'p'), 'nvcc', 'Cuda compilation tools, release 11.8, V11.8.89');
    const env = { CUDA_HOME: path.join(root, 'home'), PATH: path.join(root, 'p') };
    assert.deepEqual(await findTool('nvcc', { env, paths: { nvcc: viaSetting } }), {
      name: 'nvcc',
      path: viaSetting,
      version: '12.9',
      source: 'setting',
    });
    const t = await findTool('nvcc', { env });
    assert.equal(t.source, 'CUDA_HOME');
    assert.equal(t.version, '13.0');
    assert.equal((await findTool('nvcc', { env: { PATH: path.join(root, 'p') } })).version, '11.8');
  });

  test('missing tool: the error names it and says how to get it', async () => {
    await assert.rejects(
      findTool('cuobjdump', { env: { PATH: '/nonexistent' }, standardLocations: false }),
      (e: Error) => e instanceof MissingToolError && /^cuobjdump not found/.test(e.message) && /setup:cuda-tools/.test(e.message),
    );
  });
});

describe('GPU from nvidia-smi', () => {
  const xml = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'nvidia-smi', 'h200-q-x.xml'), 'utf8');

  test('recorded H200 XML', () => {
    const [g] = parseNvidiaSmiXml(xml);
    assert.equal(g.name, 'NVIDIA H200');
    assert.equal(g.computeCapability, '9.0');
    assert.equal(g.arch, 'sm_90');
    assert.equal(g.architectureName, 'Hopper');
    assert.equal(g.driverVersion, '580.159.04');
    assert.equal(g.cudaVersion, '13.0');
    assert.equal(g.memoryMiB, 143771);
    assert.deepEqual(g.clocksMHz, { sm: 1980, memory: 3201, maxSm: 1980, maxMemory: 3201 });
  });

  test('compute capability query wins over the name table', async () => {
    const runner = async (_c: string, args: string[]) => ({
      command: 'nvidia-smi',
      args,
      exitCode: 0,
      signal: null,
      timedOut: false,
      cancelled: false,
      durationMs: 1,
      stderr: '',
      stdout: args[0] === '-q' ? xml : '0, 9.0\n',
    });
    const gpus = await readGpus('nvidia-smi', runner);
    assert.equal(gpus[0].arch, 'sm_90');
    assert.deepEqual(
      [...parseComputeCapQuery('0, 8.6\n1, 9.0\n')],
      [
        [0, '8.6'],
        [1, '9.0'],
      ],
    );
  });

  test('no driver → no GPUs, never a throw', async () => {
    const runner = async (_c: string, args: string[]) => ({
      command: 'nvidia-smi',
      args,
      exitCode: 9,
      signal: null,
      timedOut: false,
      cancelled: false,
      durationMs: 1,
      stderr: 'NVIDIA-SMI has failed',
      stdout: '',
    });
    assert.deepEqual(await readGpus('nvidia-smi', runner), []);
    assert.deepEqual(parseNvidiaSmiXml('<not-xml'), []);
  });

  test('name table and arch strings', () => {
    assert.equal(computeCapabilityFromName('NVIDIA H100 80GB HBM3', null), '9.0');
    assert.equal(computeCapabilityFromName('NVIDIA A100-SXM4-40GB', 'Ampere'), '8.0');
    assert.equal(computeCapabilityFromName('NVIDIA GeForce RTX 3090', 'Ampere'), '8.6');
    assert.equal(computeCapabilityFromName('NVIDIA L4', null), '8.9');
    assert.equal(archOf('12.0'), 'sm_120');
  });
});
