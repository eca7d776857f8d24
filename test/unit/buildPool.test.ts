// Builds asked for by several buildAll calls at once (the file's table and a loop's factors, issue
// 39 part 4) share one pool: never more nvcc processes than the builder's concurrency, the same
// source compiled once, first asked first served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ProcessRunner } from '../../src/engine/toolchain/process';
import type { BuildRequest } from '../../src/engine/variants/build';
import { fakeBuilder, fakeNvcc, fakeProject } from './cacheFakes';

function variant(req: BuildRequest, n: number): BuildRequest {
  return { ...req, key: `v${n}`, source: `${req.source}// variant ${n}\n` };
}

test('two buildAll calls at once: at most `concurrency` compiles, a shared source compiled once, in the order asked', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-pool-'));
  try {
    const { dir, req } = fakeProject(root);
    const builder = fakeBuilder(dir, path.join(root, 'cache'));
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const slow: ProcessRunner = async (command, args, o) => {
      running++;
      most = Math.max(most, running);
      started.push(/variant (\d+)/.exec(fs.readFileSync(args[args.length - 1], 'utf8'))?.[1] ?? 'as-written');
      await new Promise(r => setTimeout(r, 30));
      try {
        return await fakeNvcc(command, args, o);
      } finally {
        running--;
      }
    };
    (builder as unknown as { run: ProcessRunner }).run = slow;
    const file = builder.buildAll([req, variant(req, 1)]);
    const loop = builder.buildAll([variant(req, 2), variant(req, 3), { ...req, key: 'full' }, variant(req, 4)]);
    const [f, l] = await Promise.all([file, loop]);
    assert.equal(most, 2, 'the builder concurrency (2) is the limit over both calls');
    assert.equal(started.length, 5, `one compile per distinct source: ${started.join(',')}`);
    assert.deepEqual(started.slice(0, 2), ['as-written', '1'], "the first call's builds start first");
    assert.ok([...f, ...l].every(r => r.status === 'ok'));
    assert.equal(l[2].key, 'full', 'a build shared with another call keeps its own key');
    assert.equal(l[2].hash, f[0].hash);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
