#!/usr/bin/env node
// Builds the results-panel webview: type-checks webview/ (its own tsconfig, DOM libs; a type error
// fails the build), then bundles webview/src/panel.ts (chart.js included) and webview/panel.css
// with esbuild into dist/webview/panel.{js,css}: IIFE, minified, es2020 (VS Code's webviews are
// Chromium; the standalone report targets any current browser).
//
//   node scripts/build-webview.mjs        (part of `npm run build`)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const outDir = path.join(root, 'dist', 'webview');
const t0 = Date.now();

const tsc = require.resolve('typescript/bin/tsc');
const check = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'webview', 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
if (check.status !== 0) {
  console.error('[build-webview] type errors in webview/ (see above)');
  process.exit(1);
}

const esbuild = await import('esbuild');
fs.mkdirSync(outDir, { recursive: true });
const common = { bundle: true, minify: true, target: 'es2020', logLevel: 'warning', legalComments: 'eof', absWorkingDir: root };
try {
  await esbuild.build({
    ...common,
    entryPoints: [path.join(root, 'webview', 'src', 'panel.ts')],
    outfile: path.join(outDir, 'panel.js'),
    format: 'iife',
    platform: 'browser',
    tsconfig: path.join(root, 'webview', 'tsconfig.json'),
  });
  await esbuild.build({ ...common, entryPoints: [path.join(root, 'webview', 'panel.css')], outfile: path.join(outDir, 'panel.css') });
} catch {
  console.error('[build-webview] esbuild failed (see above)');
  process.exit(1);
}
const size = f => `${(fs.statSync(path.join(outDir, f)).size / 1024).toFixed(0)} KiB`;
console.log(`[build-webview] dist/webview/panel.js ${size('panel.js')}, panel.css ${size('panel.css')} in ${Date.now() - t0} ms`);
