// The results panel's page in headless Chromium, as VS Code hosts it: panelHtml's page under its
// strict CSP with acquireVsCodeApi stubbed (messages and state recorded) and the theme variables
// VS Code sets, or the standalone report opened from disk. Shared by the webview test
// (test/webview/panel.test.mjs) and the docs pictures (scripts/docs-images.mjs).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readManifest, resolveChromium, toolsDirOf } from '../../scripts/test-plan.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const require = createRequire(path.join(ROOT, 'package.json'));
export const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'sweep');
export const ARTIFACTS = path.join(ROOT, '.test-artifacts', 'webview');
const ORIGIN = 'https://webview.invalid';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-extensions',
];

for (const f of ['dist/webview/panel.js', 'dist/webview/panel.css', 'out/src/panelHtml.js']) {
  if (!fs.existsSync(path.join(ROOT, f))) throw new Error(`${f} missing: run 'npm run build' first`);
}
const panelModule = require(path.join(ROOT, 'out/src/panelHtml.js'));
export const { panelHtml, reportHtml, makeNonce } = panelModule;
export const assets = panelModule.loadPanelAssets(path.join(ROOT, 'out', 'src'));
export const fixtureNames = fs
  .readdirSync(FIXTURES)
  .filter(f => f.endsWith('.json'))
  .map(f => f.slice(0, -5))
  .sort();
export const fixtures = Object.fromEntries(
  fixtureNames.map(n => [n, JSON.parse(fs.readFileSync(path.join(FIXTURES, `${n}.json`), 'utf8'))]),
);

// The browser: UNROLL_LENS_CHROMIUM, else the one scripts/setup-test-tools.sh found or unpacked
// (its manifest), else Debian's. Without one the browser tests skip (issue 27); in CI that is an
// error: CI is supposed to have every test tool.
const BROWSER = resolveChromium(process.env, readManifest(toolsDirOf(ROOT, process.env)), fs.existsSync);
if (!BROWSER.path && process.env.CI) throw new Error(`no Chromium (${BROWSER.why}): in CI scripts/setup-test-tools.sh installs it`);
/** False, or why there is no browser to drive. */
export const NO_BROWSER = BROWSER.path ? false : `no Chromium (${BROWSER.why})`;

// ------------------------------------------------------------------------------------------ themes
// What VS Code puts on <html> (style) and <body> (class) of a webview, for Dark Modern, Light
// Modern and High Contrast (a subset: the variables panel.css reads).
export const THEMES = {
  dark: {
    cls: 'vscode-dark',
    vars: {
      '--vscode-foreground': '#cccccc',
      '--vscode-descriptionForeground': '#9d9d9d',
      '--vscode-editor-background': '#1f1f1f',
      '--vscode-sideBar-background': '#181818',
      '--vscode-editorWidget-background': '#202020',
      '--vscode-panel-border': '#2b2b2b',
      '--vscode-widget-border': '#313131',
      '--vscode-editorIndentGuide-background1': '#404040',
      '--vscode-focusBorder': '#0078d4',
      '--vscode-font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
      '--vscode-font-size': '13px',
      '--vscode-editor-font-family': '"Droid Sans Mono", monospace',
      '--vscode-editorHoverWidget-background': '#202020',
      '--vscode-editorHoverWidget-foreground': '#cccccc',
      '--vscode-editorHoverWidget-border': '#454545',
      '--vscode-button-background': '#0078d4',
      '--vscode-button-foreground': '#ffffff',
      '--vscode-button-hoverBackground': '#026ec1',
      '--vscode-button-secondaryBackground': '#313131',
      '--vscode-button-secondaryForeground': '#cccccc',
      '--vscode-button-secondaryHoverBackground': '#3c3c3c',
      '--vscode-list-hoverBackground': '#2a2d2e',
      '--vscode-list-inactiveSelectionBackground': '#37373d',
      '--vscode-editorGroupHeader-tabsBackground': '#181818',
      '--vscode-charts-red': '#f14c4c',
      '--vscode-charts-blue': '#3794ff',
      '--vscode-charts-yellow': '#cca700',
      '--vscode-charts-orange': '#d18616',
      '--vscode-charts-green': '#89d185',
      '--vscode-charts-purple': '#b180d7',
      '--vscode-disabledForeground': '#8b8b8b',
      '--vscode-errorForeground': '#f85149',
      '--vscode-editorWarning-foreground': '#cca700',
    },
  },
  light: {
    cls: 'vscode-light',
    vars: {
      '--vscode-foreground': '#3b3b3b',
      '--vscode-descriptionForeground': '#717171',
      '--vscode-editor-background': '#ffffff',
      '--vscode-sideBar-background': '#f8f8f8',
      '--vscode-editorWidget-background': '#f8f8f8',
      '--vscode-panel-border': '#e5e5e5',
      '--vscode-widget-border': '#e5e5e5',
      '--vscode-editorIndentGuide-background1': '#e5e5e5',
      '--vscode-focusBorder': '#005fb8',
      '--vscode-font-family': 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
      '--vscode-font-size': '13px',
      '--vscode-editor-font-family': '"Droid Sans Mono", monospace',
      '--vscode-editorHoverWidget-background': '#f8f8f8',
      '--vscode-editorHoverWidget-foreground': '#3b3b3b',
      '--vscode-editorHoverWidget-border': '#c8c8c8',
      '--vscode-button-background': '#005fb8',
      '--vscode-button-foreground': '#ffffff',
      '--vscode-button-hoverBackground': '#0258a8',
      '--vscode-button-secondaryBackground': '#e5e5e5',
      '--vscode-button-secondaryForeground': '#3b3b3b',
      '--vscode-button-secondaryHoverBackground': '#cccccc',
      '--vscode-list-hoverBackground': '#f2f2f2',
      '--vscode-list-inactiveSelectionBackground': '#e4e6f1',
      '--vscode-editorGroupHeader-tabsBackground': '#f8f8f8',
      '--vscode-charts-red': '#e51400',
      '--vscode-charts-blue': '#1a85ff',
      '--vscode-charts-yellow': '#bf8803',
      '--vscode-charts-orange': '#d18616',
      '--vscode-charts-green': '#388a34',
      '--vscode-charts-purple': '#652d90',
      '--vscode-disabledForeground': '#8b8b8b',
      '--vscode-errorForeground': '#a1260d',
      '--vscode-editorWarning-foreground': '#bf8803',
    },
  },
  hc: {
    cls: 'vscode-high-contrast',
    vars: {
      '--vscode-foreground': '#ffffff',
      '--vscode-descriptionForeground': '#ffffffb3',
      '--vscode-editor-background': '#000000',
      '--vscode-contrastBorder': '#6fc3df',
      '--vscode-focusBorder': '#f38518',
      '--vscode-panel-border': '#6fc3df',
      '--vscode-font-family': 'system-ui, sans-serif',
      '--vscode-font-size': '13px',
      '--vscode-charts-red': '#f14c4c',
      '--vscode-charts-blue': '#3794ff',
      '--vscode-charts-yellow': '#ffd700',
      '--vscode-charts-orange': '#d18616',
      '--vscode-charts-green': '#89d185',
      '--vscode-charts-purple': '#b180d7',
    },
  },
};

// ------------------------------------------------------------------------------------------ pages

/** The webview host stand-in: panelHtml's page with a stub that runs first (same nonce). */
function hostPage({ theme = 'dark', state = null, nonce = makeNonce() } = {}) {
  const html = panelHtml({
    scriptUri: `${ORIGIN}/panel.js`,
    styleUri: `${ORIGIN}/panel.css`,
    cspSource: ORIGIN,
    nonce,
    title: 'Unroll Lens results',
  });
  const stub = `
    window.__unrollLensTest = true;
    window.__posted = [];
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
    let state = ${JSON.stringify(state).replace(/</g, '\\u003c')};
    let acquired = 0;
    window.__getState = () => state;
    window.acquireVsCodeApi = () => {
      if (acquired++) throw new Error('acquireVsCodeApi may be called once');
      return {
        postMessage: m => window.__posted.push(JSON.parse(JSON.stringify(m))),
        getState: () => state,
        setState: s => { state = JSON.parse(JSON.stringify(s)); },
      };
    };
    window.__setTheme = (cls, vars) => {
      const root = document.documentElement;
      for (const p of [...root.style]) if (p.startsWith('--vscode-')) root.style.removeProperty(p);
      for (const [k, v] of Object.entries(vars)) root.style.setProperty(k, v);
      document.body.className = cls;
    };
    window.__setTheme(${JSON.stringify(THEMES[theme].cls)}, ${JSON.stringify(THEMES[theme].vars)});
  `;
  return html.replace('<main id="app">', `<script nonce="${nonce}">${stub}</script>\n<main id="app">`);
}

let browser;
const pages = [];

/** Starts headless Chromium (once); every page below opens in it. */
export async function launchBrowser() {
  if (NO_BROWSER) return;
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const { chromium } = await import('playwright-core');
  browser ??= await chromium.launch({ executablePath: BROWSER.path, headless: true, args: CHROMIUM_ARGS });
}

/** Closes every page and the browser. */
export async function closeBrowser() {
  for (const ctx of pages) await ctx.close().catch(() => undefined);
  await browser?.close();
  browser = undefined;
}

async function newPage({ colorScheme = 'light' } = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme });
  // The host's resources, served without a network (and nothing else is reachable).
  await ctx.route('**/*', async route => {
    const url = new URL(route.request().url());
    if (url.origin === ORIGIN && url.pathname === '/panel.js')
      return route.fulfill({ contentType: 'text/javascript', body: assets.script });
    if (url.origin === ORIGIN && url.pathname === '/panel.css') return route.fulfill({ contentType: 'text/css', body: assets.css });
    if (url.origin === ORIGIN && url.pathname === '/host.html') return route.fulfill({ contentType: 'text/html', body: ctx.__hostHtml });
    if (url.protocol === 'file:') return route.continue();
    return route.abort();
  });
  const page = await ctx.newPage();
  const log = { errors: [], dialogs: [], console: [] };
  page.on('console', m => {
    log.console.push(`[${m.type()}] ${m.text()}`);
    if (m.type() === 'error') log.errors.push(m.text());
  });
  page.on('pageerror', e => log.errors.push(`pageerror: ${e.message}`));
  page.on('dialog', d => {
    log.dialogs.push(d.message());
    d.dismiss().catch(() => undefined);
  });
  pages.push(ctx);
  return { ctx, page, log };
}

export async function openHost(opts = {}) {
  const p = await newPage();
  p.ctx.__hostHtml = hostPage(opts);
  await p.page.goto(`${ORIGIN}/host.html`);
  await p.page.waitForFunction(() => window.__posted?.some(m => m.type === 'ready'));
  return p;
}

export async function postResult(page, result, progress = null) {
  await page.evaluate(
    ([r, pr]) => {
      window.__lastPosted = JSON.stringify(r);
      window.postMessage({ type: 'result', result: r, progress: pr }, '*');
    },
    [result, progress],
  );
  // Handled once the panel has stored it (setState follows every render).
  await page.waitForFunction(() => JSON.stringify(window.__getState()?.result) === window.__lastPosted);
  await settle(page);
}

/**
 * The standalone report of fixture `name`, or of `result` (written as report-NAME.html); its paths
 * relative to `baseDir` (reportHtml's default: the working directory).
 */
export async function openReport(name, { colorScheme = 'light', result = fixtures[name], baseDir } = {}) {
  const p = await newPage({ colorScheme });
  await p.page.addInitScript(() => {
    window.__unrollLensTest = true;
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
  });
  const file = path.join(ARTIFACTS, `report-${name}.html`);
  fs.writeFileSync(file, reportHtml(result, assets, baseDir ? { baseDir } : {}));
  await p.page.goto(`file://${file}`);
  await settle(p.page);
  return p;
}

/** Two animation frames: chart.js has drawn and the theme observer has run. */
export async function settle(page) {
  await page.evaluate(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))));
}
