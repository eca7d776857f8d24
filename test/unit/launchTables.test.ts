// Launches through tables of kernel pointers and cudaLaunchKernel with `&k` (issue 26): each
// counts as a launch of every kernel the table names, with the launch's sizes, so a kernel
// launched only that way gets its real block size in the warps-per-SM path, not 256 threads.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { findLaunches, launchesIn } from '../../src/engine/parse/launches';
import { globalKernelNames } from '../../src/engine/parse/launchTables';
import { warpsPerSmInFile } from '../../src/engine/occupancy/warpsPerSm';
import { analyze, lineOf, REPO_ROOT } from './helpers';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'cuda', 'kernel_tables.cu');
const source = fs.readFileSync(FIXTURE, 'utf8');
const H100 = { count: 132, gpu: 'NVIDIA H100 80GB HBM3' };

describe('launches through kernel-pointer tables', () => {
  const launches = findLaunches(source);
  const row = (k: string) => launches.filter(l => l.kernel === k).map(l => [l.callee, l.line, l.block.value, l.via?.table ?? null]);

  test('the kernels a file defines, with launch bounds and templates', () => {
    assert.deepEqual(
      [...globalKernelNames(source)],
      ['scale_a', 'scale_b', 'shift_a', 'shift_n', 'by_address', 'by_cast_address', 'by_array'],
    );
  });

  test('an array of function pointers, a typedef table read into a pointer, a struct table in a range-for', () => {
    const scales = lineOf(source, 'scales[i]<<<');
    const steps = lineOf(source, 's.kernel<<<');
    assert.deepEqual(row('scale_a'), [
      ['scales[i]', scales, 512, 'scales'],
      ['s.kernel', steps, 64, 'steps'],
    ]);
    assert.deepEqual(row('scale_b'), [
      ['scales[i]', scales, 512, 'scales'],
      ['s.kernel', steps, 64, 'steps'],
    ]);
    // `Kernel k = shifts[i]; k<<<…>>>`: the pointer is read through to the table it came from
    const k = lineOf(source, 'k<<<n / 1024');
    assert.deepEqual(row('shift_a'), [['k', k, 1024, 'shifts']]);
    assert.deepEqual(row('shift_n'), [['k', k, 1024, 'shifts']]);
    assert.equal(launches.find(l => l.kernel === 'shift_n')!.via!.line, lineOf(source, 'Kernel shifts[2]'));
  });

  test('cudaLaunchKernel with `&k`, `(const void *)&k` and a std::array entry', () => {
    assert.deepEqual(row('by_address'), [['by_address', lineOf(source, '&by_address,'), 128, null]]);
    assert.deepEqual(row('by_cast_address'), [['by_cast_address', lineOf(source, '&by_cast_address,'), 96, null]]);
    assert.deepEqual(row('by_array'), [['arrays[0]', lineOf(source, 'arrays[0]),'), 32, 'arrays']]);
    assert.ok(
      launches.every(l => l.kernel !== null),
      'every launch resolves to a kernel',
    );
  });

  test('a kernel launched only through a table gets its real block size, and the source says which table', async () => {
    const analysis = await analyze(source, FIXTURE);
    const w = warpsPerSmInFile(source, analysis, { kernel: 'shift_a', arch: 'sm_90', registers: 16, sharedBytes: 0, sms: H100 });
    // 1024 threads: 32 warps a block, and the grid (1024 blocks) fills the SMs: 2 blocks of 32 warps
    assert.deepEqual([w.kind, w.warpsPerSm], ['launch', 64]);
    assert.match(w.source, /^from the launch `<<<n \/ 1024, 1024>>>` through `k` \(the table `shifts` at line \d+ lists shift_a\)/);
    const viaApi = warpsPerSmInFile(source, analysis, {
      kernel: 'by_cast_address',
      arch: 'sm_90',
      registers: 16,
      sharedBytes: 0,
      sms: H100,
    });
    assert.equal(viaApi.kind, 'launch');
    assert.match(viaApi.source, /cudaLaunchKernel\(by_cast_address, dim3\(n \/ 96\), dim3\(96\), …\)/);
  });

  test('what is not a table launch stays as it was', () => {
    const text = [
      '__global__ void k(int *x) {}',
      'struct Ops { void (*run)(int *); };',
      'void f(Ops v, int **ptrs, int i) {',
      '  v.run<<<1, 64>>>(ptrs[i]);', // a parameter's member: nothing in the file says which kernel
      '  k<<<2, 32>>>(ptrs[i]);',
      '  if (i) { i = 0; }',
      '}',
    ].join('\n');
    assert.deepEqual(
      findLaunches(text).map(l => [l.kernel, l.callee, l.via ?? null]),
      [
        [null, 'v.run', null],
        ['k', 'k', null],
      ],
    );
    // a translation unit with no kernels of its own: the table's names are taken as kernels
    const unit = launchesIn(
      '/src/unit.cu',
      ['#include "ops.cuh"', 'K table[] = {a, b};', 'int main() { table[1]<<<1, 64>>>(0); }'].join('\n'),
    );
    assert.deepEqual(
      unit.map(l => [l.kernel, l.file]),
      [
        ['a', '/src/unit.cu'],
        ['b', '/src/unit.cu'],
      ],
    );
  });

  test('two functions with a local table of the same name: each launch reads its own (issue 40, coarsening.cu)', () => {
    const text = [
      '__global__ void rows1(float *x) {}',
      '__global__ void rows2(float *x) {}',
      '__global__ void pts1(float *x) {}',
      '__global__ void pts2(float *x) {}',
      'struct Variant { const char *name; void (*kernel)(float *); int per; };',
      'void run_rows(float *d) {',
      '  const Variant variants[] = {{"rows1", rows1, 1}, {"rows2", rows2, 2}};',
      '  for (const Variant &v : variants) {',
      '    v.kernel<<<4096, dim3(32, 32)>>>(d);',
      '  }',
      '}',
      'void run_pts(float *d) {',
      '  const Variant variants[] = {{"pts1", pts1, 1}, {"pts2", pts2, 2}};',
      '  for (const Variant &v : variants) ran += 1;',
      '  for (const Variant &v : variants) {',
      '    v.kernel<<<128, 256>>>(d);',
      '  }',
      '}',
    ].join('\n');
    assert.deepEqual(
      findLaunches(text).map(l => [l.kernel, l.line, l.via?.line ?? null]),
      [
        ['rows1', 9, 7],
        ['rows2', 9, 7],
        ['pts1', 16, 13],
        ['pts2', 16, 13],
      ],
    );
  });
});
