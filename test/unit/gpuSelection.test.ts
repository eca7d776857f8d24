import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'path';
import { GpuSelectionError, parseGpuSelection, runLocations } from '../../src/engine/gpu/selection';
import { readSettings, SETTINGS, settingProblem } from '../../src/settings';

describe('parseGpuSelection', () => {
  test('"" is the default device; "all" every GPU seen; a comma list its indices, in order', () => {
    assert.deepEqual(parseGpuSelection('', 4), []);
    assert.deepEqual(parseGpuSelection('  ', 0), []);
    assert.deepEqual(parseGpuSelection('all', 4), [0, 1, 2, 3]);
    assert.deepEqual(parseGpuSelection(' ALL ', 2), [0, 1]);
    assert.deepEqual(parseGpuSelection('all', 0), [], 'no GPU known (a launcher): the default device');
    assert.deepEqual(parseGpuSelection('0,1', 2), [0, 1]);
    assert.deepEqual(parseGpuSelection(' 3 , 1 ', 4), [3, 1]);
    assert.deepEqual(parseGpuSelection('7', 0), [7], 'count unknown: indices are not checked');
  });

  test('bad input: words, signs, fractions, empty items, duplicates, indices past the GPUs seen', () => {
    const bad: [string, number, RegExp][] = [
      ['gpu0', 2, /'gpu0' is not a CUDA device index/],
      ['-1', 2, /'-1' is not a CUDA device index/],
      ['1.5', 2, /'1.5' is not a CUDA device index/],
      ['0,,1', 2, /empty item/],
      ['0,', 2, /empty item/],
      ['1,0,1', 2, /GPU 1 is listed twice/],
      ['2', 2, /there is no GPU 2: this machine has 2 \(CUDA device indices 0 to 1\)/],
      ['0,all', 4, /'all' is not a CUDA device index/],
      ['99999999999999999999', 0, /is not a CUDA device index/],
    ];
    for (const [text, n, message] of bad) {
      assert.throws(
        () => parseGpuSelection(text, n),
        (e: unknown) => e instanceof GpuSelectionError && message.test(e.message),
        text,
      );
    }
  });

  test('the setting accepts what the parser reads and warns on the rest', () => {
    for (const ok of ['', 'all', '0', '0,1', ' 0 , 2 ']) assert.equal(settingProblem(SETTINGS.profile.gpus, ok), null, ok);
    for (const bad of ['gpu0', '0;1', '-1', '0,', 'all,0']) assert.notEqual(settingProblem(SETTINGS.profile.gpus, bad), null, bad);
    const warnings: string[] = [];
    const s = readSettings({ profile: { gpus: 'first', measurementCache: false, sharedDirectory: '/scratch/ul' } }, w => warnings.push(w));
    assert.equal(s.profile.gpus, '');
    assert.equal(s.profile.measurementCache, false);
    assert.equal(s.profile.sharedDirectory, '/scratch/ul');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /unrollLens\.profile\.gpus: expected empty \(the default device\), all, or a comma list/);
    assert.equal(SETTINGS.profile.sharedDirectory.restricted, true, 'a workspace must not point runs at planted programs');
  });
});

describe('runLocations', () => {
  const cacheDir = path.join('/home/u/.cache', 'unroll-lens', 'builds');
  const tmpDir = '/tmp';

  test('a shared directory holds builds, runs and measurements', () => {
    assert.deepEqual(runLocations({ cacheDir, sharedDirectory: '/scratch/ul', launcher: ['srun'], tmpDir }), {
      cacheDir: path.join('/scratch/ul', 'builds'),
      runDir: path.join('/scratch/ul', 'runs'),
      measurementCacheDir: path.join('/scratch/ul', 'measurements'),
    });
    assert.deepEqual(
      runLocations({ cacheDir, sharedDirectory: '/scratch/ul/', launcher: [], tmpDir }).runDir,
      path.join('/scratch/ul', 'runs'),
    );
  });

  test('a launcher without one: runs and measurements beside the build cache, never in the temp folder', () => {
    const r = runLocations({ cacheDir, sharedDirectory: '', launcher: ['srun', '-p', 'gpu'], tmpDir });
    assert.deepEqual(r, {
      cacheDir,
      runDir: path.join('/home/u/.cache', 'unroll-lens', 'runs'),
      measurementCacheDir: path.join('/home/u/.cache', 'unroll-lens', 'measurements'),
    });
    assert.ok(!r.runDir.startsWith(tmpDir));
  });

  test('no launcher: runs in the temp folder, measurements beside the build cache', () => {
    assert.deepEqual(runLocations({ cacheDir, sharedDirectory: '  ', launcher: [], tmpDir }), {
      cacheDir,
      runDir: tmpDir,
      measurementCacheDir: path.join('/home/u/.cache', 'unroll-lens', 'measurements'),
    });
  });
});
