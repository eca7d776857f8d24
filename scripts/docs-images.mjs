#!/usr/bin/env node
// `npm run docs:images`: regenerates every picture README.md and docs/*.md show, from the current
// code, into docs/images/ (issue 27). Run it after changing the UI; commit what it writes.
//
//   - The results panel: the built panel in headless Chromium, hosted as VS Code hosts it
//     (test/webview/host.mjs, the page the webview test drives), showing results recorded on an
//     H100 (test/fixtures/sweep/). A recorded file name is absolute on the machine that recorded
//     it; the picture shows it relative to this repository (cuda-samples/icache_cliff.cu).
//   - The editor: the packaged extension in a real VS Code (code-server in headless Chromium,
//     test/ui/screenshot.mjs) on cuda-samples/; needs nvcc and the test tools (npm run
//     setup:test-tools, which npm test runs). --panel-only skips these.
//
// It fails when a doc shows a picture this script does not make, or when a picture's text shows an
// absolute path of this machine.
//
//   npm run docs:images                      # = npm run build && node scripts/docs-images.mjs
//   node scripts/docs-images.mjs --panel-only
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const IMAGES = path.join(ROOT, 'docs', 'images');
const ARTIFACTS = path.join(ROOT, '.test-artifacts');
const panelOnly = process.argv.includes('--panel-only');
const log = (...a) => console.log('[docs:images]', ...a);
const die = msg => {
  console.error(`[docs:images] ERROR: ${msg}`);
  process.exit(1);
};

/** The panel pictures: fixture, the variant row to select (or none). */
const PANELS = [
  { image: 'results-panel.png', fixture: 'gpu-h100-icache_cliff', select: '72=16' },
  { image: 'icache-panel.png', fixture: 'icache_cliff' },
  { image: 'sweep-two-loops.png', fixture: 'gpu-h100-matvec_exhaustive' },
];
/** The editor pictures: what test/ui/screenshot.mjs saves under .test-artifacts/ → docs/images/. */
const EDITOR = [
  { image: 'codelens.png', from: 'ui-codelens.png' },
  { image: 'hover-variants.png', from: 'ui-hover.png' },
  { image: 'sass-listing.png', from: 'ui-sass.png' },
  { image: 'sass-diff.png', from: 'ui-sass-diff.png' },
];

// An absolute path of a machine, as shown: /work/main/…, /home/…, /workspace/unroll-lens/…
const ABSOLUTE = /(?<![\w.~-])\/(?:[\w.+-]+\/)+[\w.+-]+/g;
const LOCAL = /(?<![\w.~-])\/(?:work|workspace|home|root|tmp|Users)\//;

/** `/work/main/cuda-samples/x.cu` → `cuda-samples/x.cu`: the longest tail that names a file of this repository. */
function relativePath(p) {
  const parts = p.split('/').filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const tail = parts.slice(i).join('/');
    if (fs.existsSync(path.join(ROOT, tail))) return tail;
  }
  return p;
}

/** A copy of a result with every absolute path in its strings shown relative to the repository. */
function relativised(value) {
  if (typeof value === 'string') return value.replace(ABSOLUTE, relativePath);
  if (Array.isArray(value)) return value.map(relativised);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, relativised(v)]));
  return value;
}

/** The pictures README.md and docs/*.md show (docs/images/ names). */
function picturesInDocs() {
  const docs = [
    'README.md',
    ...fs
      .readdirSync(path.join(ROOT, 'docs'))
      .filter(f => f.endsWith('.md'))
      .map(f => `docs/${f}`),
  ];
  const used = new Set();
  for (const rel of docs)
    for (const m of fs.readFileSync(path.join(ROOT, rel), 'utf8').matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const file = path.resolve(path.dirname(path.join(ROOT, rel)), decodeURI(m[1]));
      if (path.dirname(file) === IMAGES) used.add(path.basename(file));
    }
  return used;
}

async function panelPictures() {
  const host = await import('../test/webview/host.mjs');
  if (host.NO_BROWSER) throw new Error(`${host.NO_BROWSER}: the panel pictures need one (npm run setup:test-tools)`);
  await host.launchBrowser();
  try {
    for (const p of PANELS) {
      const { page } = await host.openHost({ theme: 'dark' });
      await host.postResult(page, relativised(host.fixtures[p.fixture]));
      if (p.select) await page.click(`tr[data-variant="${p.select}"]`);
      await host.settle(page);
      const text = await page.evaluate(() => globalThis.document.body.innerText);
      const local = text.match(LOCAL);
      if (local) die(`${p.image}: the panel shows an absolute path (${local[0]}…)`);
      await page.screenshot({ path: path.join(IMAGES, p.image), fullPage: true });
      log(`docs/images/${p.image}: the panel on test/fixtures/sweep/${p.fixture}.json`);
    }
  } finally {
    await host.closeBrowser();
  }
}

function editorPictures() {
  for (const e of EDITOR) fs.rmSync(path.join(ARTIFACTS, e.from), { force: true });
  // The UI test packages the extension, installs it in code-server and takes the pictures.
  for (const [what, args] of [
    ['package the extension', ['scripts/package-vsix.mjs']],
    ['the editor in code-server', ['test/ui/screenshot.mjs']],
  ]) {
    log(`${what}: node ${args.join(' ')}`);
    const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, UNROLL_LENS_DOCS_IMAGES: '1' } });
    if (r.status !== 0) die(`${what} failed (exit ${r.status}); the editor pictures were not changed (--panel-only skips them)`);
  }
  const missing = EDITOR.filter(e => !fs.existsSync(path.join(ARTIFACTS, e.from)));
  if (missing.length)
    die(`the UI test did not take ${missing.map(e => e.from).join(', ')} (does nvcc work here? see its log above); nothing copied`);
  for (const e of EDITOR) {
    fs.copyFileSync(path.join(ARTIFACTS, e.from), path.join(IMAGES, e.image));
    log(`docs/images/${e.image}: ${e.from} of the UI test`);
  }
}

const made = new Set([...PANELS, ...EDITOR].map(p => p.image));
const unmade = [...picturesInDocs()].filter(i => !made.has(i));
if (unmade.length) die(`the docs show pictures this script does not make: ${unmade.join(', ')} (add them to PANELS or EDITOR)`);
fs.mkdirSync(IMAGES, { recursive: true });
await panelPictures();
if (panelOnly) log('--panel-only: the editor pictures were left as they are');
else editorPictures();
const unused = fs.readdirSync(IMAGES).filter(f => f.endsWith('.png') && !picturesInDocs().has(f));
if (unused.length) log(`not shown by any doc (delete them?): ${unused.join(', ')}`);
