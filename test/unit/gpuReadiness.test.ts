// The one rule for "can these variants be timed on a GPU" (engine/gpu/readiness.ts), and
// that the editor and the CLI word every answer of it.
import { strict as assert } from 'assert';
import { describe, test } from 'node:test';
import { benchStopsAt, GpuBlocker, gpuBlocker, hasMain } from '../../src/engine/gpu/readiness';
import { EDITOR_GPU_BLOCKER_TEXT } from '../../src/server/gpuReadinessText';
import { CLI_GPU_BLOCKER_TEXT } from '../../src/cli/gpuReadinessText';
import { staticReason } from '../../src/cli/sweep';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';

const program = 'int main() { return 0; }';
const ready = { hasNcu: true, gpus: 1, launcher: [] as string[], text: program };

describe('gpuBlocker', () => {
  test('each fact that stops a GPU run, first one wins', () => {
    assert.equal(gpuBlocker(ready), null);
    assert.equal(gpuBlocker({ ...ready, staticAsked: true }), 'static-asked');
    assert.equal(gpuBlocker({ ...ready, hasNcu: false }), 'no-ncu');
    assert.equal(gpuBlocker({ ...ready, hasNcu: false, timer: 'ncu' }), 'no-ncu');
    assert.equal(gpuBlocker({ ...ready, hasNcu: false, timer: 'cupti' }), null, 'the CUPTI timer needs no ncu');
    assert.equal(gpuBlocker({ ...ready, gpus: 0 }), 'no-gpu');
    assert.equal(gpuBlocker({ ...ready, text: '__global__ void k() {}' }), 'no-main');
    // the order: asked for SASS only before a missing tool, a tool before the machine, the machine before the file
    assert.equal(gpuBlocker({ staticAsked: true, hasNcu: false, gpus: 0, launcher: [], text: '' }), 'static-asked');
    assert.equal(gpuBlocker({ hasNcu: false, gpus: 0, launcher: [], text: '' }), 'no-ncu');
    assert.equal(gpuBlocker({ hasNcu: true, gpus: 0, launcher: [], text: '' }), 'no-gpu');
  });

  test('a launcher puts the GPU on another node; a compile command builds a program from a file without main()', () => {
    assert.equal(gpuBlocker({ ...ready, gpus: 0, launcher: ['srun', '--gres=gpu:1'] }), null);
    assert.equal(gpuBlocker({ ...ready, text: '__global__ void k() {}', compileCommand: ['make', '{output}'] }), null);
  });

  test('a bench stops up front when nothing can run: no main() or no GPU (issue 43: it built every variant for minutes first)', () => {
    assert.equal(benchStopsAt('no-main'), true);
    assert.equal(benchStopsAt('no-gpu'), true);
    // a missing ncu is the engine's MissingToolError (with the fix); static-asked is the sweep's own mode
    for (const b of [null, 'no-ncu', 'static-asked'] as const) assert.equal(benchStopsAt(b), false, String(b));
  });

  test('main( is found with spacing, not inside a longer name', () => {
    assert.ok(hasMain('int main (int argc, char** argv) {'));
    assert.ok(!hasMain('void domain_setup() {}'));
  });

  test('the editor and the CLI have words for every blocker, and the CLI sweep uses the same rule', () => {
    const all: GpuBlocker[] = ['static-asked', 'no-ncu', 'no-gpu', 'no-main'];
    for (const b of all) {
      assert.ok(EDITOR_GPU_BLOCKER_TEXT[b].length > 10, b);
      assert.ok(CLI_GPU_BLOCKER_TEXT[b].length > 10, b);
    }
    assert.match(EDITOR_GPU_BLOCKER_TEXT['no-gpu'], /unrollLens\.profile\.launcher/);
    assert.match(CLI_GPU_BLOCKER_TEXT['no-gpu'], /--launcher/);
    const t = { ncu: { path: '/x/ncu', version: '2025.3' }, gpus: [] } as unknown as Toolchain;
    assert.equal(staticReason({ forceStatic: false, launcher: [], timer: 'ncu' }, t, program), CLI_GPU_BLOCKER_TEXT['no-gpu']);
    assert.equal(staticReason({ forceStatic: false, launcher: ['srun'], timer: 'ncu' }, t, program), null);
    assert.equal(staticReason({ forceStatic: true, launcher: [], timer: 'ncu' }, t, program), CLI_GPU_BLOCKER_TEXT['static-asked']);
    const noNcu = { ncu: null, gpus: [{ name: 'H100' }] } as unknown as Toolchain;
    assert.equal(staticReason({ forceStatic: false, launcher: [], timer: 'ncu' }, noNcu, program), CLI_GPU_BLOCKER_TEXT['no-ncu']);
    assert.equal(staticReason({ forceStatic: false, launcher: [], timer: 'cupti' }, noNcu, program), null, 'the CUPTI timer needs no ncu');
  });
});
