// "Clear Build Cache" as the server answers it (ClearCacheRequest, server/buildCache.ts): the
// client counts for its confirmation, then clears, and shows exactly these answers.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MeasurementCache } from '../../src/engine/gpu/measurementCache';
import { clearBuildCache } from '../../src/server/buildCache';

const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-clearcache-'));
/** The per-installation key (measurement seals) lives in the user's config folder: here a temp one. */
process.env.XDG_CONFIG_HOME = path.join(ROOT, 'config');

function storage(tag: string): string {
  return fs.mkdtempSync(path.join(ROOT, `${tag}-`));
}

describe('ClearCacheRequest', () => {
  test('no global storage folder: nothing to count or clear', () => {
    assert.deepEqual(clearBuildCache(null, { clear: false }), { status: 'no-storage' });
    assert.deepEqual(clearBuildCache(null, { clear: true }), { status: 'no-storage' });
  });

  test('counts the builds folder and the measurements beside it, then clears them', () => {
    const dir = storage('ours');
    assert.deepEqual(clearBuildCache(dir, { clear: false }), {
      status: 'counted',
      location: path.join(dir, 'builds'),
      builds: 0,
      bytes: 0,
      size: '0 bytes',
      measurements: 0,
      left: 0,
    });
    new MeasurementCache(path.join(dir, 'measurements')).put('ab'.repeat(32), { groups: [], stdout: 'x' });
    const counted = clearBuildCache(dir, { clear: false });
    assert.equal(counted.status, 'counted');
    assert.equal(counted.status === 'counted' && counted.measurements, 1);
    assert.deepEqual(clearBuildCache(dir, { clear: true }), {
      status: 'cleared',
      location: path.join(dir, 'builds'),
      builds: 0,
      bytes: 0,
      size: '0 bytes',
      measurements: 1,
      left: 0,
    });
    assert.equal(new MeasurementCache(path.join(dir, 'measurements')).info().entries, 0);
  });

  test('a builds folder that is not ours is refused and left untouched', () => {
    const dir = storage('foreign');
    fs.mkdirSync(path.join(dir, 'builds'));
    fs.writeFileSync(path.join(dir, 'builds', 'notes.txt'), 'mine');
    const answer = clearBuildCache(dir, { clear: true });
    assert.equal(answer.status, 'refused');
    assert.match(answer.status === 'refused' ? answer.reason : '', /is not an Unroll Lens build cache.*nothing was deleted/);
    assert.equal(fs.readFileSync(path.join(dir, 'builds', 'notes.txt'), 'utf8'), 'mine');
  });
});
