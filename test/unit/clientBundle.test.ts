// Issue 24: the extension client talks to the language server only, so its bundle
// (dist/extension.js, scripts/bundle.mjs) holds no engine, server or CLI module, not even through a
// shared file such as panelHtml.ts. Read from esbuild's metafile of the build (dist/bundles.meta.json):
// run `npm run build` first. The size budget catches a dependency dragged in some other way.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const DIST = path.join(REPO_ROOT, 'dist');
const METAFILE = path.join(DIST, 'bundles.meta.json');
const CLIENT = 'dist/extension.js';

/**
 * Measured 890,809 bytes when the client stopped importing the engine (931,301 before: the cache
 * classes, i-cache text and export-ownership checks); the budget is that plus about 25 %.
 */
const CLIENT_BUDGET_BYTES = 1_115_000;

interface Metafile {
  outputs: Record<string, { bytes: number; inputs: Record<string, unknown> }>;
}

function clientOutput(): { bytes: number; inputs: string[] } {
  assert.ok(fs.existsSync(METAFILE), `${METAFILE} is missing: run \`npm run build\` (scripts/bundle.mjs writes it) before this test`);
  const meta = JSON.parse(fs.readFileSync(METAFILE, 'utf8')) as Metafile;
  const out = meta.outputs[CLIENT];
  assert.ok(out, `the metafile has no ${CLIENT} (outputs: ${Object.keys(meta.outputs).join(', ')})`);
  // Paths relative to the repository root, in the form the layer rules use.
  return { bytes: out.bytes, inputs: Object.keys(out.inputs).map(p => p.replace(/\\/g, '/').replace(/^\.\//, '')) };
}

describe('client bundle (dist/extension.js)', () => {
  test('is the bundle on disk and holds the client itself', () => {
    const { bytes, inputs } = clientOutput();
    // Not vacuous: the metafile describes this bundle, and the client's entry is in it.
    assert.equal(fs.statSync(path.join(REPO_ROOT, CLIENT)).size, bytes, 'the metafile is not of the dist/extension.js on disk: rebuild');
    assert.ok(inputs.includes('src/extension/main.ts'), `src/extension/main.ts is not among its inputs: ${inputs.slice(0, 20).join(', ')}`);
    assert.ok(inputs.includes('src/protocol.ts'));
  });

  test('holds no engine, server or CLI module', () => {
    const layered = clientOutput().inputs.filter(p => /^src\/(engine|server|cli)\//.test(p));
    assert.deepEqual(layered, [], 'the client reaches these through imports; ask the server instead (a request in src/protocol.ts)');
  });

  test(`stays within ${CLIENT_BUDGET_BYTES} bytes`, () => {
    const { bytes } = clientOutput();
    assert.ok(bytes <= CLIENT_BUDGET_BYTES, `dist/extension.js is ${bytes} bytes, past its budget of ${CLIENT_BUDGET_BYTES}`);
  });
});
