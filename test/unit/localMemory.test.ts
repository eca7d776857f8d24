// Local memory beside spills (issue 40): a rolled loop that indexes a small array moves the array to
// the stack with no register spill (ggml's softmax.cu:168: STACK 16 B, one STL per iteration). The
// stack frame (ptxas -v) and the loop's LDL/STL are reported in `sass` (text and JSON), on
// test/fixtures/cuda/local_acc.cu built with the real nvcc (16 accumulators indexed by the loop at
// line 12: rolled, a 64-byte frame and one LDL and one STL per iteration; unrolled ×4, none).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { localTraffic } from '../../src/engine/variants/appliedUnroll';
import type { SassInstruction } from '../../src/engine/sass';
import { REPO_ROOT, useCudaTools } from './helpers';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'cuda', 'local_acc.cu');

async function runCli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: x => (stdout += x), err: x => (stderr += x), isTTY: false });
  return { code, stdout, stderr };
}

describe('local memory: stack frame and LDL/STL beside spills', () => {
  test('localTraffic counts LDL and STL (any width) and nothing else', () => {
    const ins = (opcode: string, modifiers: string[] = []) =>
      ({ address: 0, predicate: null, opcode, modifiers, operands: '' }) as SassInstruction;
    assert.deepEqual(localTraffic([ins('LDL'), ins('STL', ['64']), ins('STL'), ins('LDS'), ins('STG', ['E'])]), { loads: 1, stores: 2 });
  });

  const tools = useCudaTools(['nvdisasm']);
  test('sass --loop 12: rolled, 64 B of stack and 1 LDL / 1 STL in the loop, 0 spills; ×4: no stack', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const r = await runCli(['sass', FIXTURE, '--loop', '12', '--factors', '1,4', '--arch', 'sm_90', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    const [rolled, four] = j.loop.variants;
    assert.deepEqual([rolled.spillStores, rolled.stackBytes, rolled.localLoads, rolled.localStores], [0, 64, 1, 1]);
    assert.deepEqual([four.effectiveUnroll, four.stackBytes, four.localLoads, four.localStores], [4, 0, 0, 0]);
    // the file as written (full unroll): no stack, no local traffic in the kernel
    assert.deepEqual(
      j.kernels.map((k: { stackBytes: number; localLoads: number; localStores: number }) => [k.stackBytes, k.localLoads, k.localStores]),
      [[0, 0, 0]],
    );
    const text = await runCli(['sass', FIXTURE, '--loop', '12', '--factors', '1', '--arch', 'sm_90']);
    assert.match(text.stdout, /spills {2}stack {2}local ld\/st/);
    assert.match(text.stdout, /\n1 +ok .* 0 +64 +1\/1 /);
  });
});
