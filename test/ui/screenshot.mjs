#!/usr/bin/env node
// UI check of the PACKAGED extension in a real VS Code workbench, offline:
//   1. installs .test-artifacts/unroll-lens.vsix (scripts/package-vsix.mjs) into a fresh
//      code-server extensions dir with --install-extension;
//   2. opens the workbench on <repo>/cuda-samples in headless Debian chromium (playwright-core);
//   3. opens matmul_unroll.cu (quick open, or the explorer as a fallback) and reveals its first
//      kernel loop;
//   4. waits for a CodeLens "Benchmark this loop" rendered in the editor, opens the Problems
//      panel, and saves .test-artifacts/ui-codelens.png;
//   5. when nvcc built the file (SASS counts in the CodeLens): clicks that lens to build the loop's
//      variants, closes the results panel it opens and saves the loop's hover scrolled to the
//      variants table (.test-artifacts/ui-hover.png; optional); clicks the loop's "Show SASS" lens
//      and saves the listing (.test-artifacts/ui-sass.png), then runs "Compare SASS of two
//      variants…" from the palette (unroll 4 vs 8, normalised) and saves the diff editor
//      (.test-artifacts/ui-sass-diff.png); both are required once nvcc works.
//      With UNROLL_LENS_DOCS_IMAGES=1 (scripts/docs-images.mjs, which copies these pictures into
//      docs/images/) a picture that would show an absolute path of this machine fails the run.
//   6. opens the extension's details page and checks that its README shows every image and
//      links nowhere near example.invalid (.test-artifacts/ui/extension-details.png).
// Exit 0 on success, 1 on failure (with .test-artifacts/ui/failure.png and logs).
//
//   npm run test:ui          (= node scripts/package-vsix.mjs && node test/ui/screenshot.mjs)
//   UNROLL_LENS_VSIX=/path/x.vsix UNROLL_LENS_UI_TIMEOUT_S=120 node test/ui/screenshot.mjs
import fs from 'node:fs';
import path from 'node:path';
import {
  HarnessError,
  artifactsRoot,
  codeServerCli,
  freePort,
  interrupted,
  launchChromium,
  loadTools,
  makeLogger,
  makeRunDirs,
  repoRoot,
  runCleanups,
  startCodeServer,
} from '../integration/lib/harness.mjs';

const log = makeLogger('test:ui');
const TIMEOUT_MS = Number(process.env.UNROLL_LENS_UI_TIMEOUT_S ?? 90) * 1000;
const vsix = path.resolve(process.env.UNROLL_LENS_VSIX ?? path.join(artifactsRoot, 'unroll-lens.vsix'));
const workspace = path.join(repoRoot, 'cuda-samples');
const SAMPLE = 'matmul_unroll.cu';
const shot = path.join(artifactsRoot, 'ui-codelens.png');
const EXTENSION_ID = 'unroll-lens.unroll-lens';

/** 1-based line of the first `for` inside the first __global__ kernel of the sample. */
function firstKernelLoopLine(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const k = lines.findIndex(l => /__global__/.test(l));
  const f = lines.findIndex((l, i) => i > k && /^\s*for\s*\(/.test(l));
  return f >= 0 ? f + 1 : Math.max(k + 1, 1);
}

async function openSample(page) {
  // quick open (Ctrl+P) uses the server's file search (ripgrep, see setup-test-tools.sh)
  try {
    await page
      .locator('.monaco-workbench')
      .click({ position: { x: 700, y: 400 } })
      .catch(() => {});
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 10_000 });
    await input.fill(SAMPLE);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: SAMPLE }).first();
    await row.waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter');
    await page.locator('.tab', { hasText: SAMPLE }).first().waitFor({ timeout: 15_000 });
    log(`opened ${SAMPLE} with quick open`);
    return;
  } catch (e) {
    log(`quick open did not work (${e.message.split('\n')[0]}); using the explorer`);
    await page.keyboard.press('Escape').catch(() => {});
  }
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: SAMPLE }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.dblclick();
  await page.locator('.tab', { hasText: SAMPLE }).first().waitFor({ timeout: 15_000 });
  log(`opened ${SAMPLE} from the explorer`);
}

async function goToLine(page, line) {
  await page
    .locator('.monaco-editor textarea')
    .first()
    .focus()
    .catch(() => {});
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 10_000 });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
}

/**
 * Opens the installed extension's details page (Extensions view) and checks the README there:
 * every image of README.md rendered (the page's webview shows only https: and data: images),
 * no link or image pointing at example.invalid (package.json's placeholder repository).
 */
async function checkDetailsPage(page, artifacts) {
  const expectedImages = (fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8').match(/!\[[^\]]*\]\(/g) ?? []).length;
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+Shift+X');
  const search = page
    .locator('.extensions-viewlet .suggest-input-container textarea, .extensions-viewlet .monaco-inputbox textarea')
    .first();
  await search.waitFor({ timeout: 20_000 });
  await search.fill('@installed Unroll Lens');
  const row = page.locator('.extensions-viewlet .monaco-list-row', { hasText: 'Unroll Lens' }).first();
  await row.waitFor({ timeout: 20_000 });
  await row.click();
  await page.locator('.extension-editor').waitFor({ timeout: 20_000 });
  // The README renders in a nested webview frame: poll until its images have loaded.
  const deadline = Date.now() + 30_000;
  let readme = null;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const r = await frame
        .evaluate(() => {
          if (!/Unroll Lens/.test(document.querySelector('h1')?.textContent ?? '')) return null;
          return {
            images: [...document.querySelectorAll('img')].map(i => ({
              src: i.getAttribute('src') ?? '',
              width: i.naturalWidth,
              complete: i.complete,
            })),
            links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
          };
        })
        .catch(() => null);
      if (r && r.images.length >= expectedImages && r.images.every(i => i.complete)) readme = r;
    }
    if (readme) break;
    await page.waitForTimeout(500);
  }
  await page.screenshot({ path: path.join(artifacts, 'extension-details.png') });
  if (!readme) throw new HarnessError(`the details page did not show the README with ${expectedImages} images within 30 s`);
  const broken = readme.images.filter(i => i.width === 0).map(i => i.src.slice(0, 80));
  if (broken.length) throw new HarnessError(`README images not shown on the details page: ${broken.join(', ')}`);
  const placeholder = [...readme.links, ...readme.images.map(i => i.src)].filter(u => /example\.invalid/i.test(u ?? ''));
  if (placeholder.length) throw new HarnessError(`README on the details page links to example.invalid: ${placeholder.join(', ')}`);
  log(`details page: README shows ${readme.images.length} images, ${readme.links.length} links, none to example.invalid`);
}

/** Clicks the sample's tab, then moves the mouse off it: the tab's tooltip shows the file's full path. */
async function focusSource(page) {
  await page.locator('.tab', { hasText: SAMPLE }).first().click();
  await page.mouse.move(1150, 16);
}

/** Arrow-down in the focused hover until `target`'s top reaches the hover's top, or it stops moving. */
async function scrollHoverTo(page, hover, target) {
  let last = null;
  for (let i = 0; i < 120; i++) {
    const [h, t] = await Promise.all([hover.boundingBox(), target.boundingBox()]);
    if (!h || !t || t.y <= h.y + 10 || t.y === last) return;
    last = t.y;
    await page.keyboard.press('ArrowDown');
    await page.waitForTimeout(30);
  }
}

/**
 * For the docs' pictures (UNROLL_LENS_DOCS_IMAGES=1, set by scripts/docs-images.mjs): no text in
 * the window, its webviews included, shows an absolute path of this machine.
 */
async function checkNoMachinePaths(page, what) {
  if (!process.env.UNROLL_LENS_DOCS_IMAGES) return;
  const local = /(?<![\w.~-])\/(?:work|workspace|home|root|tmp|Users)\/[^\s'"]*/;
  for (const frame of page.frames()) {
    const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    const m = text.includes(repoRoot) ? [repoRoot] : local.exec(text);
    if (m) throw new HarnessError(`${what} would show an absolute path of this machine: ${m[0]}`);
  }
}

/** Picks the quick-pick row whose label contains `text` (types it, then Enter). */
async function pickQuick(page, text, prefix = '') {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 20_000 });
  await input.fill(prefix + text);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first().waitFor({ timeout: 20_000 });
  await page.keyboard.press('Enter');
}

/**
 * The SASS listing of the loop at `line` (its "Show SASS" lens) and the diff editor on two of its
 * variants (the palette command with the cursor on the loop). Throws when either does not open.
 */
async function sassShots(page, line) {
  await page.keyboard.press('Escape');
  // More room for the two editors: hide the side bar (Ctrl+B) and close the results panel's group.
  await page.keyboard.press('Control+B');
  await focusSource(page);
  await page.keyboard.press('Control+Shift+P');
  await pickQuick(page, 'Close Editors in Other Groups', '>');
  await goToLine(page, line);
  const showLens = page.locator('.codelens-decoration a', { hasText: /^Show SASS$/ }).first();
  await showLens.waitFor({ timeout: 30_000 });
  await showLens.click();
  const tab = page.locator('.tab', { hasText: /\.cusass/ }).first();
  await tab.waitFor({ timeout: 180_000 });
  await page
    .locator('.monaco-editor .view-line', { hasText: /Unroll\sLens\s·\sSASS\sof/ })
    .first()
    .waitFor({ timeout: 180_000 });
  // From the loop body's source line to its SASS: "Show SASS of this source line" selects that
  // line's instructions in the listing (the source line stays lit while the cursor is there).
  await focusSource(page);
  await goToLine(page, line + 1);
  await page.keyboard.press('Control+Shift+P');
  await pickQuick(page, 'Show SASS of this source line', '>');
  await page.locator('.monaco-editor .view-line', { hasText: /FFMA/ }).first().waitFor({ timeout: 20_000 });
  await page.waitForTimeout(1200);
  const sassShot = path.join(path.dirname(shot), 'ui-sass.png');
  await checkNoMachinePaths(page, 'the SASS listing picture');
  await page.screenshot({ path: sassShot });
  log(`SASS listing: ${path.relative(repoRoot, sassShot)} (tab "${(await tab.innerText()).trim()}")`);

  // Back to the source editor, cursor on the loop, then the palette command.
  await focusSource(page);
  await goToLine(page, line);
  await page.keyboard.press('Control+Shift+P');
  await pickQuick(page, 'Compare SASS of two variants', '>'); // '>': the palette's command mode
  await pickQuick(page, 'Two unroll factors');
  await pickQuick(page, 'unroll 4');
  await pickQuick(page, 'unroll 8');
  await pickQuick(page, 'Normalised');
  await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 180_000 });
  await page
    .locator('.tab', { hasText: /unroll\s4\s↔\sunroll\s8/ })
    .first()
    .waitFor({ timeout: 30_000 });
  // The whole window for the diff: side by side rather than inline.
  await page.keyboard.press('Control+Shift+P');
  await pickQuick(page, 'Close Editors in Other Groups', '>');
  await page.waitForTimeout(1500);
  const diffShot = path.join(path.dirname(shot), 'ui-sass-diff.png');
  await checkNoMachinePaths(page, 'the SASS diff picture');
  await page.screenshot({ path: diffShot });
  log(`SASS diff editor (unroll 4 ↔ unroll 8, normalised): ${path.relative(repoRoot, diffShot)}`);
}

async function main() {
  if (!fs.existsSync(vsix)) throw new HarnessError(`${vsix} not found: run 'node scripts/package-vsix.mjs' (npm run package) first`);
  if (!fs.existsSync(path.join(workspace, SAMPLE))) throw new HarnessError(`${path.join(workspace, SAMPLE)} not found`);
  const tools = loadTools();
  // The installed .vsix cannot see the repository's .tools/: point it at the disassembler the
  // setup script installed, so the SASS CodeLens and hover have per-loop numbers.
  const nvdisasm = path.join(repoRoot, '.tools', 'cuda-tools', 'bin', 'nvdisasm');
  const dirs = makeRunDirs('ui', { settings: fs.existsSync(nvdisasm) ? { 'unrollLens.toolchain.nvdisasmPath': nvdisasm } : {} });
  fs.rmSync(shot, { force: true });

  log(`installing ${path.relative(repoRoot, vsix)} into a fresh extensions dir`);
  const out = codeServerCli(tools, dirs, ['--install-extension', vsix], path.join(dirs.artifacts, 'install-extension.log'));
  if (!new RegExp(`${EXTENSION_ID.replace('.', '\\.')}.*successfully installed|successfully installed`, 'i').test(out)) {
    throw new HarnessError(`--install-extension did not report success:\n${out}`);
  }
  const installed = fs.readdirSync(dirs.extensions).filter(d => d.startsWith(EXTENSION_ID));
  if (installed.length === 0) throw new HarnessError(`${EXTENSION_ID} is not in ${dirs.extensions} after --install-extension:\n${out}`);
  log(`installed ${installed.join(', ')}`);

  const port = await freePort();
  const server = await startCodeServer({
    tools,
    dirs,
    port,
    folder: workspace,
    log,
    logFile: path.join(dirs.artifacts, 'code-server.log'),
  });
  const { page } = await launchChromium(tools, dirs);
  try {
    await page.goto(`${server.url}/?folder=${encodeURIComponent(workspace)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: TIMEOUT_MS });
    log('workbench rendered');
    await openSample(page);
    const line = firstKernelLoopLine(path.join(workspace, SAMPLE));
    await goToLine(page, line);
    log(`revealed line ${line}`);

    const lens = page.locator('.codelens-decoration', { hasText: 'Benchmark this loop' }).first();
    await lens.waitFor({ timeout: TIMEOUT_MS });
    const lensText = (await lens.innerText()).replace(/\s+/g, ' ').trim();
    if (!lensText.includes('Benchmark this loop')) throw new HarnessError(`unexpected CodeLens text "${lensText}"`);
    log(`CodeLens rendered: "${lensText}"`);
    const allLenses = (await page.locator('.codelens-decoration').allInnerTexts()).map(t => t.replace(/\s+/g, ' ').trim());
    fs.writeFileSync(path.join(dirs.artifacts, 'codelens.txt'), `${allLenses.join('\n')}\n`);
    log(`${allLenses.length} CodeLens lines visible, e.g. "${allLenses.find(t => /trip count/.test(t)) ?? allLenses[0]}"`);

    // Problems panel (optional: the samples may be free of findings)
    await page.keyboard.press('Control+Shift+M');
    const markers = page.locator('.markers-panel');
    if (
      await markers.waitFor({ timeout: 10_000 }).then(
        () => true,
        () => false,
      )
    ) {
      await page.waitForTimeout(1000);
      const rows = (await page.locator('.markers-panel .monaco-list-row').allInnerTexts())
        .map(t => t.replace(/\s+/g, ' ').trim())
        .filter(t => /unroll-lens/.test(t));
      log(`Problems panel open: ${rows.length} unroll-lens problem(s)${rows[0] ? `, e.g. "${rows[0].slice(0, 120)}"` : ''}`);
    } else {
      log('Problems panel did not open (not required)');
    }
    // The background build of the file as written turns the SASS lens into counts (needs nvcc).
    const sassLens = page.locator('.codelens-decoration a', { hasText: /^SASS \d+ instr/ }).first();
    if (
      await sassLens.waitFor({ timeout: 90_000 }).then(
        () => true,
        () => false,
      )
    )
      log(`SASS CodeLens: "${(await sassLens.innerText()).trim()}"`);
    else log('no SASS counts in the CodeLens within 90 s (nvcc or nvdisasm missing?)');
    await page.keyboard.press('Control+Shift+M'); // close the panel again: more editor in the picture
    await page.waitForTimeout(500);
    await checkNoMachinePaths(page, 'the CodeLens picture');
    await page.screenshot({ path: shot });
    log(`screenshot saved: ${path.relative(repoRoot, shot)}`);
    // Optional second picture: build the loop's variants from the lens, then hover the loop.
    if (await sassLens.isVisible().catch(() => false)) {
      await sassLens.click();
      const done = page.locator('.notifications-toasts', { hasText: /variants built/ }).first();
      if (
        await done.waitFor({ timeout: 180_000 }).then(
          () => true,
          () => false,
        )
      ) {
        // The results panel opened beside the source: close it, so that the hover has the room.
        await page.keyboard.press('Escape');
        await focusSource(page);
        await page.keyboard.press('Control+Shift+P');
        await pickQuick(page, 'Close Editors in Other Groups', '>');
        // Cursor is on the loop's line: Home puts it on `for`; Ctrl+K Ctrl+I shows the hover.
        await goToLine(page, line);
        await page.keyboard.press('End');
        await page.keyboard.press('Home');
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        const hover = page.locator('.monaco-hover', { hasText: 'Unroll variants' }).first();
        if (
          await hover.waitFor({ timeout: 20_000 }).then(
            () => true,
            () => false,
          )
        ) {
          // The hover is focused: scroll it down until the variants table's title is at its top.
          await page.keyboard.press('Control+K');
          await page.keyboard.press('Control+I');
          await scrollHoverTo(page, hover, hover.locator('p', { hasText: 'Unroll variants' }).first());
          await page.waitForTimeout(500);
          const hoverShot = path.join(path.dirname(shot), 'ui-hover.png');
          await checkNoMachinePaths(page, 'the hover picture');
          await page.screenshot({ path: hoverShot });
          log(`hover with the variants table: ${path.relative(repoRoot, hoverShot)}`);
        } else log('hover table did not show (not required)');
      } else log('variant build did not finish in time (not required)');
      await sassShots(page, line);
    } else log('no SASS listing screenshots: nvcc did not build the file');
    await checkDetailsPage(page, dirs.artifacts);
  } catch (e) {
    const fail = path.join(dirs.artifacts, 'failure.png');
    await page.screenshot({ path: fail }).catch(() => {});
    throw new HarnessError(
      `${e.message.split('\n')[0]}; failure screenshot ${path.relative(repoRoot, fail)}, logs in ${path.relative(repoRoot, dirs.artifacts)}/`,
    );
  }
}

let exitCode = 1;
try {
  await main();
  exitCode = 0;
} catch (e) {
  if (interrupted()) await new Promise(() => {});
  console.error(`[test:ui] ERROR: ${e instanceof HarnessError ? e.message : (e?.stack ?? e)}`);
} finally {
  await runCleanups();
}
log(exitCode === 0 ? 'PASS' : 'FAIL');
process.exit(exitCode);
