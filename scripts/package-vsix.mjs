#!/usr/bin/env node
// Packages the extension with @vscode/vsce into .test-artifacts/unroll-lens.vsix (or --out PATH),
// then checks the archive: what the extension loads at run time must be inside (compiled out/,
// web-tree-sitter's runtime + wasm, tree-sitter-cuda.wasm, the language client/server
// libraries), sources, tests, tools and native parser builds must not (see .vscodeignore).
//
//   npm run build && npm run package
//   node scripts/package-vsix.mjs --out /tmp/x.vsix
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const t0 = Date.now();
const log = (...a) => console.log(`[package-vsix +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const die = msg => { console.error(`[package-vsix] ERROR: ${msg}`); process.exit(1); };

const outArg = process.argv.indexOf('--out');
const out = path.resolve(outArg > 0 && process.argv[outArg + 1] ? process.argv[outArg + 1] : path.join(root, '.test-artifacts', 'unroll-lens.vsix'));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const main = (pkg.main ?? '').replace(/^\.\//, '');
if (!main || !fs.existsSync(path.join(root, main))) die(`${pkg.main} not found: run 'npm run build' first`);
if (!fs.existsSync(path.join(root, '.vscodeignore'))) die('.vscodeignore is missing: the package would carry the whole repository');

let vsceBin;
try {
  const vscePkgPath = require.resolve('@vscode/vsce/package.json');
  const vscePkg = JSON.parse(fs.readFileSync(vscePkgPath, 'utf8'));
  vsceBin = path.join(path.dirname(vscePkgPath), typeof vscePkg.bin === 'string' ? vscePkg.bin : vscePkg.bin.vsce);
} catch (e) {
  die(`@vscode/vsce is not installed (${e.message}): run 'npm ci'`);
}

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.rmSync(out, { force: true });
log(`vsce package -> ${path.relative(root, out)}`);
// vsce rewrites relative links in README.md against the repository; with a repository that is
// not on a host it recognises it needs explicit base URLs (derived from package.json here).
const repoUrl = (typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url ?? '')
  .replace(/^git\+/, '').replace(/\.git$/, '');
const baseArgs = /^https?:\/\//.test(repoUrl)
  ? ['--baseContentUrl', `${repoUrl}/blob/HEAD`, '--baseImagesUrl', `${repoUrl}/raw/HEAD`]
  : [];
const r = spawnSync(process.execPath, [vsceBin, 'package', '--out', out, '--skip-license', '--allow-missing-repository', ...baseArgs], {
  cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000,
  env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
});
const vsceOut = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
if (vsceOut) console.log(vsceOut.split('\n').map(l => `  ${l}`).join('\n'));
if (r.error || r.status !== 0 || !fs.existsSync(out)) die(`vsce package failed (${r.error?.message ?? `exit ${r.status}`})`);

// ------------------------------------------------------------------ check what went in
const yauzl = createRequire(require.resolve('@vscode/vsce/package.json'))('yauzl');
const entries = await new Promise((resolve, reject) => {
  yauzl.open(out, { lazyEntries: true }, (err, zip) => {
    if (err) return reject(err);
    const names = [];
    zip.on('entry', e => { names.push({ name: e.fileName, size: e.uncompressedSize }); zip.readEntry(); });
    zip.on('end', () => resolve(names));
    zip.on('error', reject);
    zip.readEntry();
  });
});
const names = new Set(entries.map(e => e.name));
const has = p => names.has(`extension/${p}`);
const under = p => entries.some(e => e.name.startsWith(`extension/${p}`));

const required = [
  'package.json',
  main,
  'node_modules/web-tree-sitter/package.json',
  'node_modules/web-tree-sitter/tree-sitter.cjs',
  'node_modules/web-tree-sitter/tree-sitter.wasm',
  'node_modules/tree-sitter-cuda/tree-sitter-cuda.wasm',
  'node_modules/vscode-languageclient/node.js',
  'node_modules/vscode-languageserver/node.js',
  'node_modules/vscode-languageserver-textdocument/package.json',
  'node_modules/vscode-jsonrpc/package.json',
];
const forbidden = [
  'src/', 'test/', 'out/test/', '.tools/', '.test-artifacts/', 'cuda-samples/', 'scripts/', '.ci/',
  'node_modules/tree-sitter-cuda/src/', 'node_modules/tree-sitter-cuda/prebuilds/',
  'node_modules/tree-sitter-c/', 'node_modules/tree-sitter-cpp/', 'node_modules/node-addon-api/',
  'node_modules/mocha/', 'node_modules/playwright-core/', 'node_modules/@vscode/vsce/', 'node_modules/typescript/',
];
const missing = required.filter(p => !has(p));
const leaked = forbidden.filter(p => under(p));
const bytes = fs.statSync(out).size;
const unpacked = entries.reduce((s, e) => s + e.size, 0);
const byTop = {};
for (const e of entries) {
  const parts = e.name.split('/');
  const key = parts[1] === 'node_modules' ? `node_modules/${parts[2].startsWith('@') ? `${parts[2]}/${parts[3]}` : parts[2]}` : parts.slice(1, 2).join('/');
  byTop[key] = (byTop[key] ?? 0) + e.size;
}
log(`${path.relative(root, out)}: ${(bytes / 1024).toFixed(0)} KiB, ${entries.length} files, ${(unpacked / 1024 / 1024).toFixed(1)} MiB unpacked`);
for (const [k, v] of Object.entries(byTop).sort((a, b) => b[1] - a[1]).slice(0, 12)) {
  console.log(`  ${(v / 1024).toFixed(0).padStart(7)} KiB  ${k}`);
}
if (missing.length) die(`the package lacks files the extension needs at run time:\n  ${missing.join('\n  ')}`);
if (leaked.length) die(`the package carries files it should not (fix .vscodeignore):\n  ${leaked.join('\n  ')}`);
log('OK: runtime files present, sources/tests/tools excluded');
