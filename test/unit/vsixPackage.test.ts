// Issue 27: the .vsix holds every file the extension loads at run time, nothing else, and stays
// within a size budget. No zipping: the file list is vsce's own (its listFiles, reading
// .vscodeignore, as `vsce package` does) and the size is each file deflated as vsce's zip library
// does (scripts/vsix-contents.mjs); `npm run package` checks that estimate against the real archive
// every time it packages (within 0.1 % so far). Run `npm run build` first: dist/ is what ships.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { REPO_ROOT } from './helpers';

/**
 * The .vsix in bytes. Measured 3,191,177 before issue 27 (13 files, two thirds of it the README's
 * seven screenshots, embedded as data: URLs) and 1,322,920 after (19 files, one screenshot); with
 * issue 43's second README picture (the first session's CodeLens) 1,589,209, and the budget is
 * that plus about 10 %. docs/measurements.md, "Issue 27: the package".
 */
const VSIX_BUDGET_BYTES = 1_750_000;

interface PackagedFile {
  /** Archive entry: extension/dist/server.js. */
  name: string;
  size: number;
  compressed?: number;
}

interface VsixContents {
  RUNTIME_FILES: string[];
  isAllowed(name: string): boolean;
  vsixFileList(root: string): Promise<PackagedFile[]>;
  estimateVsixBytes(files: PackagedFile[]): number;
}

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'vsix-contents.mjs');
const load = (): Promise<VsixContents> => import(pathToFileURL(SCRIPT).href);
const BUNDLES = ['dist/extension.js', 'dist/server.js'];

/** Files of the repository that the bundles name in a string literal ('tree-sitter.wasm', "…/panel.css"): what they load. */
function filesTheBundlesName(): string[] {
  const candidates = ['dist', 'native', 'syntaxes', 'media']
    .filter(d => fs.existsSync(path.join(REPO_ROOT, d)))
    .flatMap(d => fs.readdirSync(path.join(REPO_ROOT, d), { recursive: true }).map(f => path.posix.join(d, String(f).replace(/\\/g, '/'))))
    .filter(f => fs.statSync(path.join(REPO_ROOT, f)).isFile());
  const texts = BUNDLES.map(b => fs.readFileSync(path.join(REPO_ROOT, b), 'utf8'));
  return candidates.filter(f => {
    const name = path.posix.basename(f).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const literal = new RegExp(`['"\`]([^'"\`\\s]*/)?${name}['"\`]`);
    return texts.some(t => literal.test(t));
  });
}

describe('the .vsix (issue 27)', () => {
  let m: VsixContents;
  let files: PackagedFile[];
  let names: Set<string>;
  let estimate: number;
  let ms: number;

  before(async () => {
    for (const b of BUNDLES) assert.ok(fs.existsSync(path.join(REPO_ROOT, b)), `${b} is missing: run \`npm run build\` before this test`);
    const t0 = performance.now();
    m = await load();
    files = await m.vsixFileList(REPO_ROOT);
    estimate = m.estimateVsixBytes(files);
    ms = performance.now() - t0;
    names = new Set(files.map(f => f.name));
  });

  test('holds every file the extension loads at run time', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      main: string;
      contributes: { grammars?: { path: string }[]; walkthroughs?: { steps: { media?: { markdown?: string } }[] }[] };
    };
    const named = filesTheBundlesName();
    // Not vacuous: the bundles name the server, the parser's wasm, the panel and the timer's source.
    for (const f of ['dist/server.js', 'dist/tree-sitter-cuda.wasm', 'dist/webview/panel.js', 'native/cupti_timer.c'])
      assert.ok(named.includes(f), `${f} is no longer named by ${BUNDLES.join(' or ')}: update this test and RUNTIME_FILES`);
    const required = new Set([
      pkg.main.replace(/^\.\//, ''),
      ...m.RUNTIME_FILES,
      ...(pkg.contributes.grammars ?? []).map(g => g.path.replace(/^\.\//, '')),
      ...(pkg.contributes.walkthroughs ?? []).flatMap(w => w.steps.flatMap(st => (st.media?.markdown ? [st.media.markdown] : []))),
      ...named,
      'package.json',
      'readme.md',
      'LICENSE.txt',
    ]);
    const missing = [...required].filter(f => !names.has(`extension/${f}`));
    assert.deepEqual(missing, [], 'the extension loads these at run time: let them into the package (.vscodeignore)');
    // and the list the packaging script checks the archive against knows them all
    const unlisted = named.filter(f => f !== pkg.main.replace(/^\.\//, '') && !m.RUNTIME_FILES.includes(f));
    assert.deepEqual(unlisted, [], 'the bundles load these: add them to RUNTIME_FILES (scripts/vsix-contents.mjs)');
  });

  test('holds nothing else', () => {
    const leaked = files.map(f => f.name).filter(n => !m.isAllowed(n));
    assert.deepEqual(leaked, [], 'the extension does not load these at run time: keep them out (.vscodeignore)');
  });

  test(`stays within ${VSIX_BUDGET_BYTES} bytes`, () => {
    const largest = [...files]
      .sort((a, b) => (b.compressed ?? 0) - (a.compressed ?? 0))
      .slice(0, 5)
      .map(f => `${f.name} ${f.compressed} bytes`)
      .join(', ');
    console.log(`vsix estimate ${estimate} bytes, ${files.length} files, in ${ms.toFixed(0)} ms; largest: ${largest}`);
    assert.ok(
      estimate <= VSIX_BUDGET_BYTES,
      `the .vsix would be ${estimate} bytes, past its budget of ${VSIX_BUDGET_BYTES} (largest in the archive: ${largest}). ` +
        'A README screenshot taken anew: make it a palette PNG (pngquant --quality 80-100 --speed 1 --strip); ' +
        'otherwise see what grew (npm run package lists the contents) before raising the budget',
    );
  });
});
