#!/usr/bin/env node
// Bundles what the .vsix ships with esbuild (run by `npm run build` after tsc):
//   dist/extension.js  <- src/extension/main.ts (vscode stays external: the host provides it)
//   dist/server.js     <- src/server/main.ts
//   dist/tree-sitter.wasm, dist/tree-sitter-cuda.wasm (src/engine/parse/parser.ts looks next to
//   the running module first, so the bundle finds them without node_modules)
//   dist/bundles.meta.json  esbuild's metafile: which source files each bundle holds and its size
//   (test/unit/clientBundle.test.ts checks the client bundle holds no engine, server or CLI code;
//   not packaged: .vscodeignore lets only dist/*.js and *.wasm in)
// One file per process instead of ~450 modules from node_modules: faster activation and a
// package without node_modules. The CLI and the tests keep using tsc's out/.
// Not minified, so stack traces in bug reports stay readable; the source maps (dist/*.map) are
// for debugging from the repository and are not packaged.
//
//   node scripts/bundle.mjs
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const dist = path.join(root, 'dist');
const t0 = Date.now();

fs.rmSync(dist, { recursive: true, force: true });
const { metafile } = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { extension: 'src/extension/main.ts', server: 'src/server/main.ts' },
  outdir: dist,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode'],
  // vscode-languageserver-types' "main" is a UMD wrapper esbuild cannot follow; its "module" is plain ESM
  mainFields: ['module', 'main'],
  // web-tree-sitter's ESM build finds itself through import.meta.url, which a CommonJS bundle
  // lacks; its CommonJS build (what tsc's out/ loads) uses __dirname
  alias: { 'web-tree-sitter': require.resolve('web-tree-sitter') },
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
fs.writeFileSync(path.join(dist, 'bundles.meta.json'), JSON.stringify(metafile, null, 1));
for (const specifier of ['web-tree-sitter/tree-sitter.wasm', 'tree-sitter-cuda/tree-sitter-cuda.wasm']) {
  const from = require.resolve(specifier);
  fs.copyFileSync(from, path.join(dist, path.basename(from)));
}
const files = fs.readdirSync(dist).filter(f => !f.endsWith('.map') && !f.endsWith('.meta.json'));
const kib = f => (fs.statSync(path.join(dist, f)).size / 1024).toFixed(0);
console.log(`[bundle] dist/: ${files.map(f => `${f} ${kib(f)} KiB`).join(', ')} in ${Date.now() - t0} ms`);
