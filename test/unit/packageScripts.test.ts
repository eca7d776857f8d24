// Issue 27: each quick-start command (`npm ci && npm run demo`, `npm ci && npm test`) builds the
// project once. `npm ci` runs the lifecycle scripts below; a build there was a second build of
// every command (about half a minute on two cores).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const BUILDS = /npm run build|\btsc\b|bundle\.mjs|build-webview\.mjs/g;

test('npm ci builds nothing: no install-time lifecycle script builds', () => {
  for (const hook of ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare', 'prepublish'])
    assert.equal((pkg.scripts[hook] ?? '').match(BUILDS), null, hook);
});

test('npm run demo and npm test build exactly once, and the scripts they run do not build again', () => {
  assert.equal(pkg.scripts.build, 'tsc -p . && node scripts/bundle.mjs && node scripts/build-webview.mjs');
  for (const name of ['demo', 'test']) {
    const line = pkg.scripts[name];
    assert.deepEqual(line.match(/npm run build/g), ['npm run build'], name);
    for (const script of line.match(/scripts\/[\w-]+\.mjs/g) ?? []) {
      const code = fs
        .readFileSync(path.join(REPO_ROOT, script), 'utf8')
        .split('\n')
        .filter(l => !/^\s*\/\//.test(l))
        .join('\n');
      assert.equal(code.match(/npm run build|['"]build['"]\]/g), null, `${script} builds again`);
    }
  }
});
