#!/usr/bin/env node
// Packages the extension with @vscode/vsce into .test-artifacts/unroll-lens.vsix (or --out PATH),
// then checks the archive: the esbuild bundles (dist/extension.js, dist/server.js), the tree-sitter
// wasm files, package.json, README, LICENSE and the Get Started walkthrough's media and sample
// must be inside and nothing else (no out/, node_modules, sources, tests or tools; see
// .vscodeignore); the README must be self-contained.
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
// what the extension loads at run time (scripts/bundle.mjs writes dist/)
const runtime = [
  main,
  'dist/server.js',
  'dist/tree-sitter.wasm',
  'dist/tree-sitter-cuda.wasm',
  'dist/webview/panel.js',
  'dist/webview/panel.css',
  // the SASS listings' TextMate grammar (package.json contributes.grammars)
  'syntaxes/unroll-lens-sass.tmLanguage.json',
  // the CUPTI kernel timer's source: the server builds it with the user's nvcc (--timer cupti)
  'native/cupti_timer.c',
  // the Get Started walkthrough: each step's markdown (package.json contributes.walkthroughs) and its sample kernel
  ...(pkg.contributes?.walkthroughs ?? []).flatMap(w => w.steps.map(s => s.media?.markdown).filter(Boolean)),
  'walkthrough/sample/first_benchmark.cu',
];
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
// The installed extension's details page renders the README in a webview whose content policy
// admits only https: and data: images and that has no base URL inside the extension, so a
// relative image shows nothing, and vsce's default (prefixing the repository URL from
// package.json) points at a host that does not serve the files. The packaged README therefore
// carries its images as data: URLs, and links to repository files that are not in the package
// become plain text.
const IMAGE_TYPES = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif' };
const isRelative = target => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#');
let embedded = 0;
const readme = fs
  .readFileSync(path.join(root, 'README.md'), 'utf8')
  .replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (all, alt, target) => {
    if (!isRelative(target)) return all;
    const file = path.join(root, decodeURI(target));
    const type = IMAGE_TYPES[path.extname(file).toLowerCase()];
    if (!type) die(`README.md: image ${target} is not a PNG, JPEG or GIF (vsce refuses SVG data URLs)`);
    if (!fs.existsSync(file)) die(`README.md: image ${target} does not exist`);
    embedded++;
    return `![${alt}](data:${type};base64,${fs.readFileSync(file).toString('base64')})`;
  })
  .replace(/(?<!!)\[([^\]]+)\]\(([^)\s]+)\)/g, (all, text, target) => (isRelative(target) ? text : all));
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
      const entry = { name: e.fileName, size: e.uncompressedSize };
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
// anything else is a leak: out/, node_modules, sources, tests, tools, source maps
const allowed = p =>
  ['[Content_Types].xml', 'extension.vsixmanifest', 'extension/package.json', 'extension/readme.md', 'extension/LICENSE.txt'].includes(p) ||
  /^extension\/dist\/[^/]+\.(js|wasm)$/.test(p) ||
  /^extension\/dist\/webview\/panel\.(js|css)$/.test(p) ||
  p === 'extension/syntaxes/unroll-lens-sass.tmLanguage.json' ||
  p === 'extension/native/cupti_timer.c' ||
  /^extension\/walkthrough\/[^/]+\.md$/.test(p) ||
  p === 'extension/walkthrough/sample/first_benchmark.cu';
const missing = required.filter(p => !has(p));
const leaked = entries.map(e => e.name).filter(p => !allowed(p));
const bytes = fs.statSync(out).size;
const unpacked = entries.reduce((sum, e) => sum + e.size, 0);
log(
  `${path.relative(root, out)}: ${(bytes / 1024).toFixed(0)} KiB, ${entries.length} files, ${(unpacked / 1024 / 1024).toFixed(1)} MiB unpacked`,
);
for (const e of [...entries].sort((a, b) => b.size - a.size)) console.log(`  ${(e.size / 1024).toFixed(0).padStart(7)} KiB  ${e.name}`);
if (missing.length) die(`the package lacks files the extension needs at run time:\n  ${missing.join('\n  ')}`);
if (leaked.length) die(`the package carries files it should not (fix .vscodeignore):\n  ${leaked.join('\n  ')}`);

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
log(
  `OK: bundles, wasm, package.json, README (${embedded} images embedded, no example.invalid links), LICENSE and the walkthrough's media and sample; nothing else`,
);
