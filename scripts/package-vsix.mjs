#!/usr/bin/env node
// Packages the extension with @vscode/vsce into .test-artifacts/unroll-lens.vsix (or --out PATH),
// then checks the archive: the esbuild bundles (dist/extension.js, dist/server.js), the tree-sitter
// wasm files, package.json, README and LICENSE must be inside and nothing else (no out/,
// node_modules, sources, tests or tools; see .vscodeignore); the README must be self-contained.
// Prints the contents (size, size in the archive, path; largest first; totals) and writes them to
// .test-artifacts/vsix-contents.txt, with the size test/unit/vsixPackage.test.ts estimates for
// the same files (scripts/vsix-contents.mjs), so the estimate the size budget rests on is checked
// against the real archive at every packaging.
//
//   npm run build && npm run package
//   node scripts/package-vsix.mjs --out /tmp/x.vsix
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUNTIME_FILES, contentsTable, estimateVsixBytes, isAllowed, isRelative, packagedReadme, vsixFileList } from './vsix-contents.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const t0 = Date.now();
const log = (...a) => console.log(`[package-vsix +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const die = msg => {
  console.error(`[package-vsix] ERROR: ${msg}`);
  process.exit(1);
};

const outArg = process.argv.indexOf('--out');
const out = path.resolve(
  outArg > 0 && process.argv[outArg + 1] ? process.argv[outArg + 1] : path.join(root, '.test-artifacts', 'unroll-lens.vsix'),
);
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const main = (pkg.main ?? '').replace(/^\.\//, '');
// what the extension loads at run time (scripts/vsix-contents.mjs says who loads each)
const runtime = [main, ...RUNTIME_FILES];
for (const f of runtime)
  if (!f || !fs.existsSync(path.join(root, f))) die(`${f || 'package.json main'} not found: run 'npm run build' first`);
if (!fs.existsSync(path.join(root, '.vscodeignore'))) die('.vscodeignore is missing: the package would carry the whole repository');

let vsceBin;
try {
  const vscePkgPath = require.resolve('@vscode/vsce/package.json');
  const vscePkg = JSON.parse(fs.readFileSync(vscePkgPath, 'utf8'));
  vsceBin = path.join(path.dirname(vscePkgPath), typeof vscePkg.bin === 'string' ? vscePkg.bin : vscePkg.bin.vsce);
} catch (e) {
  die(`@vscode/vsce is not installed (${e.message}): run 'npm ci'`);
}

// ------------------------------------------------------------------ self-contained README
// (why: scripts/vsix-contents.mjs, packagedReadme)
let readme, embedded;
try {
  ({ text: readme, embedded } = packagedReadme(root));
} catch (e) {
  die(e.message);
}
// vsce reads the README from inside the folder it packages; any name works (it ships as readme.md)
const readmeRel = path.join('.test-artifacts', 'package', 'README.md');
fs.mkdirSync(path.dirname(path.join(root, readmeRel)), { recursive: true });
fs.writeFileSync(path.join(root, readmeRel), readme);

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.rmSync(out, { force: true });
log(`vsce package -> ${path.relative(root, out)}`);
const r = spawnSync(
  process.execPath,
  [
    vsceBin,
    'package',
    '--out',
    out,
    '--no-dependencies', // the bundles carry the dependencies; vsce need not walk node_modules
    '--readme-path',
    readmeRel,
    '--no-rewrite-relative-links',
  ],
  {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 300_000,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
  },
);
const vsceOut = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
if (vsceOut)
  console.log(
    vsceOut
      .split('\n')
      .map(l => `  ${l}`)
      .join('\n'),
  );
if (r.error || r.status !== 0 || !fs.existsSync(out)) die(`vsce package failed (${r.error?.message ?? `exit ${r.status}`})`);
// vsce's warnings (unbundled files, missing LICENSE, …) are defects of the package: fail on them
const warnings = vsceOut.split('\n').filter(l => /\bWARNING\b/.test(l));
if (warnings.length) die(`vsce warned:\n  ${warnings.join('\n  ')}`);

// ------------------------------------------------------------------ check what went in
const yauzl = createRequire(require.resolve('@vscode/vsce/package.json'))('yauzl');
const entries = await new Promise((resolve, reject) => {
  yauzl.open(out, { lazyEntries: true }, (err, zip) => {
    if (err) return reject(err);
    const list = [];
    zip.on('entry', e => {
      const entry = { name: e.fileName, size: e.uncompressedSize, compressed: e.compressedSize };
      list.push(entry);
      if (e.fileName !== 'extension/readme.md') return zip.readEntry();
      zip.openReadStream(e, (err2, stream) => {
        if (err2) return reject(err2);
        const chunks = [];
        stream.on('data', c => chunks.push(c));
        stream.on('end', () => {
          entry.text = Buffer.concat(chunks).toString('utf8');
          zip.readEntry();
        });
        stream.on('error', reject);
      });
    });
    zip.on('end', () => resolve(list));
    zip.on('error', reject);
    zip.readEntry();
  });
});
const names = new Set(entries.map(e => e.name));
const has = p => names.has(`extension/${p}`);

const required = ['package.json', 'readme.md', 'LICENSE.txt', ...runtime];
const missing = required.filter(p => !has(p));
// anything else is a leak: out/, node_modules, sources, tests, tools, source maps
const leaked = entries.map(e => e.name).filter(p => !isAllowed(p));
const bytes = fs.statSync(out).size;
// What the unit test (test/unit/vsixPackage.test.ts) computes without zipping, for the same files:
// its size budget is only as good as this estimate.
const estimated = estimateVsixBytes(await vsixFileList(root));
const table = contentsTable(entries, bytes);
console.log(table);
const listing = path.join(root, '.test-artifacts', 'vsix-contents.txt');
fs.mkdirSync(path.dirname(listing), { recursive: true });
fs.writeFileSync(
  listing,
  `${path.relative(root, out)} (scripts/package-vsix.mjs, ${new Date().toISOString()})\n${table}\n` +
    `estimated without zipping (test/unit/vsixPackage.test.ts): ${estimated} bytes\n`,
);
log(
  `${path.relative(root, out)}: ${bytes} bytes (${(bytes / 1024).toFixed(0)} KiB), ${entries.length} files; ` +
    `the unit test's estimate ${estimated} bytes (${(((estimated - bytes) / bytes) * 100).toFixed(1)} %); listing in ${path.relative(root, listing)}`,
);
if (missing.length) die(`the package lacks files the extension needs at run time:\n  ${missing.join('\n  ')}`);
if (leaked.length) die(`the package carries files it should not (fix .vscodeignore):\n  ${leaked.join('\n  ')}`);
// The budget test rests on the estimate: it must not fall short of the archive by more than 1 %.
if (estimated < bytes * 0.99)
  die(`the unit test's size estimate (${estimated} bytes) falls short of the archive (${bytes} bytes): fix estimateVsixBytes`);

// The packaged README: no link to the placeholder repository host, no link into files the
// package lacks, every image of README.md embedded.
const text = entries.find(e => e.name === 'extension/readme.md').text ?? '';
const targets = [
  ...[...text.matchAll(/\]\(([^)\s]+)\)/g)].map(m => m[1]),
  ...[...text.matchAll(/\b(?:src|href)=["']([^"']+)["']/g)].map(m => m[1]),
];
const problems = [];
if (/example\.invalid/i.test(text)) problems.push('mentions example.invalid (the placeholder repository host)');
for (const t of targets)
  if (isRelative(t) && !has(decodeURI(t).replace(/^\.\//, ''))) problems.push(`links to ${t}, which is not in the package`);
const dataImages = targets.filter(t => t.startsWith('data:image/')).length;
if (dataImages !== embedded) problems.push(`has ${dataImages} embedded images, README.md has ${embedded}`);
if (problems.length) die(`the packaged README is not self-contained:\n  ${problems.join('\n  ')}`);
log(`OK: bundles, wasm, package.json, README (${embedded} images embedded, no example.invalid links) and LICENSE; nothing else`);
