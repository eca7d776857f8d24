// A project's run times the instantiations of the loop's kernel template that other units built
// (issue 39: "each instantiation that ran a row"): recognised by their mangled names. The names
// are the ones cuobjdump listed in the fixture project's executable on the H200
// (test/fixtures/gpu/h200/project-rowlib/fx-functions.txt) and nvcc's own manglings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { kernelTemplateKey, moreOfSameTemplate, otherUnitsNote, templateKeysOf } from '../../src/engine/gpu/stages/sameTemplate';
import { timeNative } from '../../src/engine/gpu/cupti/timeNative';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';

const functions = fs
  .readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h200', 'project-rowlib', 'fx-functions.txt'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map(l => l.replace('Function : ', ''));

test('the same kernel template, other arguments: one key; other kernels and non-templates none or another', () => {
  const rows = functions.filter(f => f.includes('rows_dot'));
  assert.equal(rows.length, 3);
  assert.deepEqual(new Set(rows.map(kernelTemplateKey)), new Set(['rows_dot']));
  assert.equal(kernelTemplateKey('_Z5scalePffi'), null, 'not a template: no other instantiation exists');
  assert.equal(kernelTemplateKey('_Z15reduce_rows_f32ILb0EEvPKfPfi'), 'reduce_rows_f32');
  assert.equal(kernelTemplateKey('_Z7reduce6IiLj32ELb1EEvPT_S1_j'), 'reduce6');
  assert.equal(kernelTemplateKey('_ZN4ggml8rows_dotILi1EEEvPf'), 'ggml::rows_dot');
  assert.equal(kernelTemplateKey('_ZN4ggml5scaleEPf'), null);
  // nvcc's per-unit namespace of internal kernels (separable compilation) matches any unit's
  const a = kernelTemplateKey('_ZN39_INTERNAL_1a2b3c4d_11_rows_wide_cu_8rows_dotILi32ELi1EEEvPKfPfi');
  const b = kernelTemplateKey('_ZN40_INTERNAL_9f8e7d6c_12_rows_small_cu_8rows_dotILi2ELi4EEEvPKfPfi');
  assert.equal(a, b);
  assert.notEqual(a, kernelTemplateKey('_ZN4ggml8rows_dotILi1EEEvPf'), 'another namespace is another template');
  for (const bad of ['', '_Z', 'main', '_Z99x', '_ZN3fooE', '_ZSt4moveIiEvv']) assert.doesNotThrow(() => kernelTemplateKey(bad), bad);
});

test('launched kernels of the same template not yet timed are added; others and the timed ones are not', () => {
  const keys = templateKeysOf(['_Z8rows_dotILi32ELi1EEvPKfPfi', '_Z8rows_dotILi1ELi64EEvPKfPfi']);
  assert.deepEqual(keys, ['rows_dot']);
  const more = moreOfSameTemplate(keys, ['_Z8rows_dotILi32ELi1EEvPKfPfi', '_Z8rows_dotILi1ELi64EEvPKfPfi'], functions);
  assert.deepEqual(more, ['_Z8rows_dotILi2ELi4EEvPKfPfi']);
  assert.deepEqual(moreOfSameTemplate([], [], functions), [], 'no template keys (a loop in a device function): nothing added');
  assert.match(
    otherUnitsNote(more, { [more[0]]: 'void rows_dot<2, 4>(float const*, float*, int)' }),
    /1 instantiation .*rows_dot<2, 4>.*SASS is unknown/,
  );
});

test('timeNative: an instantiation built by another unit, launched by the run, gets its own timings', async () => {
  const line = (k: string, s: number, du: number) =>
    JSON.stringify({ k, s, du, d: 0, st: 7, g: [64, 1, 1], b: [32, 1, 1], r: 24, ss: 0, ds: 0 });
  const own = '_Z8rows_dotILi32ELi1EEvPKfPfi';
  const other = '_Z8rows_dotILi2ELi4EEvPKfPfi';
  const launches = Array.from({ length: 24 }, (_, i) => [
    line(own, 1000 * i, 5000 + i),
    line(other, 1000 * i + 500, 7000 + i),
    line('_Z5scalePffi', 1000 * i + 700, 900),
  ]).flat();
  const text = ['{"init":1,"cupti":130001,"pid":1,"base":"1"}', ...launches, `{"end":1,"records":${launches.length},"dropped":0}`, ''].join(
    '\n',
  );
  const toolchain = {
    runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
      fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT, text);
      return {
        command: '',
        args: [],
        exitCode: 0,
        signal: null,
        stdout: 'ok\n',
        stderr: '',
        timedOut: false,
        cancelled: false,
        durationMs: 1,
      };
    },
  } as unknown as Toolchain;
  const p = { label: 'x', program: '/x/prog', file: '/x/rowdot.cuh' };
  const o = { toolchain, launcher: [], args: [], samples: 20, warmup: 2, timeoutMs: 10_000, library: '/lib/t.so' };
  const target = { kernel: own, kernels: [own], anyLaunched: true, sameTemplate: ['rows_dot'] };
  const t = await timeNative(p, target, o);
  assert.equal(t.status, 'ok', t.message ?? '');
  assert.deepEqual([...t.groups.keys()].sort(), [other, own].sort(), 'scale (another kernel) is not timed');
  assert.equal(t.groups.get(other)!.durations.length, 20);
  assert.equal(t.groups.get(other)!.durations[0], 7002 / 1e6, 'past the warm-up of 2');
  const without = await timeNative(p, { kernel: own, kernels: [own], anyLaunched: true }, o);
  assert.deepEqual([...without.groups.keys()], [own], "no template keys: the unit's kernels only");
});
