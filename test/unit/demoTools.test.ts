// `npm run demo` installs the SASS readers it needs (issue 10): scripts/cuda-tools.mjs, which the
// demo runs before its SASS steps, finds nvdisasm where the CLI looks, runs
// scripts/setup-cuda-tools.sh (as `npm test` does) when it is nowhere, and when that cannot work
// (offline) says so and what the loop tables will lack instead of failing silently.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'cuda-tools.mjs');

function run(tools: string) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: '/usr/bin:/bin',
    UNROLL_LENS_TOOLS: tools,
    UNROLL_LENS_ARCHIVE_URI: 'http://127.0.0.1:9/debian',
  };
  delete env.CUDA_HOME;
  delete env.CUDA_PATH;
  const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', env, timeout: 240_000 });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('demo: CUDA tools on first run', () => {
  test('nvdisasm already in the tools folder: nothing is installed', () => {
    const tools = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-demo-tools-'));
    fs.mkdirSync(path.join(tools, 'cuda-tools', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(tools, 'cuda-tools', 'bin', 'nvdisasm'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const r = run(tools);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /nvdisasm: .*cuda-tools\/bin\/nvdisasm/);
    assert.doesNotMatch(r.out, /setup-cuda-tools/);
  });

  test('missing and cannot be installed (offline): the setup script is tried, then a clear message', t => {
    if (['nvdisasm', 'cuobjdump'].some(x => fs.existsSync(path.join('/usr/local/cuda/bin', x))))
      return t.skip('/usr/local/cuda/bin has the tools: nothing to install');
    const tools = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-demo-tools-'));
    const r = run(tools);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /nvdisasm not found: installing cuobjdump\/nvdisasm into \.tools\/ \(scripts\/setup-cuda-tools\.sh/);
    assert.match(r.out, /\[setup-cuda-tools\]/);
    assert.match(r.out, /could not install cuobjdump\/nvdisasm \(setup-cuda-tools\.sh exited 1; offline, or no Debian archive\?\)/);
    assert.match(r.out, /Run `npm run setup:cuda-tools` once online/);
    assert.ok(!fs.existsSync(path.join(tools, 'cuda-tools', 'bin', 'nvdisasm')));
  });
});
