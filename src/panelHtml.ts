// HTML for the results panel (shared by the extension host and the CLI, like protocol.ts): the page the extension host sets as the webview's html
// (panelHtml), and a self-contained offline report of one SweepResult (reportHtml). Node only,
// no `vscode` import: the host passes in the webview URIs, CSP source and nonce.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { SweepResult } from './protocol';
import { REPORT_GENERATOR_META } from './schema/reportMarker';
import { packageRoot } from './packageRoot';

export interface PanelHtmlOptions {
  /** Webview URI of dist/webview/panel.js (webview.asWebviewUri). */
  scriptUri: string;
  /** Webview URI of dist/webview/panel.css. */
  styleUri: string;
  /** webview.cspSource. */
  cspSource: string;
  /** Fresh per page load: the only script (and inline style) allowed. */
  nonce: string;
  title: string;
}

export interface PanelAssets {
  script: string;
  css: string;
}

/** A random nonce for the page's Content-Security-Policy. */
export function makeNonce(): string {
  return crypto.randomBytes(18).toString('base64');
}

/** Text for an HTML text node or a quoted attribute value. */
function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function checkNonce(nonce: string): string {
  if (!/^[A-Za-z0-9+/=_-]{16,}$/.test(nonce)) throw new Error('nonce must be at least 16 base64 characters');
  return nonce;
}

function checkCspSource(src: string): string {
  // A CSP source list as VS Code gives it (`'self' https://*.vscode-cdn.net` in code-server): the
  // only quoted keyword allowed is 'self'; no directive separators or markup can come through.
  const tokens = src.trim().split(/\s+/).filter(Boolean);
  if (!tokens.length || tokens.some(t => t !== "'self'" && /[;,'"<>]/.test(t)))
    throw new Error(`invalid cspSource: ${JSON.stringify(src)}`);
  return tokens.join(' ');
}

function page(o: { csp: string; title: string; head: string; body: string; bodyClass?: string }): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    // Marks a file as ours: `sweep --report` replaces an existing file only when it carries this.
    REPORT_GENERATOR_META,
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(o.csp)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(o.title)}</title>`,
    o.head,
    '</head>',
    `<body${o.bodyClass ? ` class="${escapeHtml(o.bodyClass)}"` : ''}>`,
    '<main id="app"><p class="ul-empty">Loading results…</p></main>',
    o.body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * The webview's html. CSP: nothing but the extension's own resources and the nonce'd script;
 * the script builds the page and asks the host for the result (`ready` → `result`).
 */
export function panelHtml(o: PanelHtmlOptions): string {
  const nonce = checkNonce(o.nonce);
  const src = checkCspSource(o.cspSource);
  const csp = [
    "default-src 'none'",
    `img-src ${src} data:`,
    `style-src ${src} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `font-src ${src}`,
  ].join('; ');
  return page({
    csp,
    title: o.title,
    head: `<link rel="stylesheet" href="${escapeHtml(o.styleUri)}" nonce="${nonce}">`,
    body: `<script nonce="${nonce}" src="${escapeHtml(o.scriptUri)}"></script>`,
  });
}

/**
 * Inlined code must not end its element early: `</script` / `</style` are escaped (esbuild
 * already writes `<\/script` in strings), and `<!--` or `<script`, which would switch the HTML
 * tokenizer into its script-escaped states, are refused in scripts (the bundle has neither; a change that adds
 * one should fail loudly, not produce a report that silently breaks).
 */
function inlineSafe(code: string, tag: 'script' | 'style'): string {
  if (tag === 'script' && /<!--|<script/i.test(code)) throw new Error(`cannot inline ${tag}: it contains "<!--" or "<script"`);
  return code.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1');
}

/** JSON inside `<script type="application/json">`: no `<` at all, so no tag can end it. */
function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** `dir` with a trailing separator, or null for a filesystem root (a prefix that every absolute path shares). */
function dirPrefix(dir: string): string | null {
  const d = path.resolve(dir);
  return path.parse(d).root === d ? null : d + path.sep;
}

/**
 * The result as a shared report shows it: the source named relative to `baseDir` (the folder the
 * report was written from), or by its base name when outside it, and no absolute path of this
 * machine where one of those folders starts a path (a compiler message, a note). A report is
 * sent to other people; the live panel, never written to disk, keeps the absolute path.
 */
function shareableResult(result: SweepResult, baseDir: string): SweepResult {
  const file = path.resolve(baseDir, result.file);
  const rel = path.relative(path.resolve(baseDir), file);
  const inside = rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  const shown = inside ? rel.split(path.sep).join('/') : path.basename(file);
  // Longest first: the file itself, then its folder (outside baseDir), then baseDir.
  const prefixes = [inside ? null : dirPrefix(path.dirname(file)), dirPrefix(baseDir)].filter((p): p is string => p !== null);
  const rewrite = (s: string): string => prefixes.reduce((t, p) => t.split(p).join(''), s.split(file).join(shown));
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return rewrite(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [rewrite(k), walk(x)]));
    return v;
  };
  return walk(result) as SweepResult;
}

/**
 * A self-contained report: opens offline from disk, loads nothing (script, css and the result
 * are inline, allowed by a per-file nonce), and renders in standalone mode (no Apply/Export).
 * `baseDir` (default: the working directory): paths are shown relative to it (shareableResult).
 */
export function reportHtml(input: SweepResult, assets: PanelAssets, opts: { nonce?: string; baseDir?: string } = {}): string {
  const result = shareableResult(input, opts.baseDir ?? process.cwd());
  const nonce = checkNonce(opts.nonce ?? makeNonce());
  const csp = ["default-src 'none'", 'img-src data:', `style-src 'nonce-${nonce}'`, `script-src 'nonce-${nonce}'`, 'font-src data:'].join(
    '; ',
  );
  const file = result.file.split(/[\\/]/).pop() || result.file;
  return page({
    csp,
    title: `Unroll Lens: ${result.kernel} (${file})`,
    head: `<style nonce="${nonce}">\n${inlineSafe(assets.css, 'style')}\n</style>`,
    body: [
      `<script type="application/json" id="sweep-data">${embedJson(result)}</script>`,
      `<script nonce="${nonce}">\n${inlineSafe(assets.script, 'script')}\n</script>`,
    ].join('\n'),
  });
}

/** dist/webview/panel.{js,css} of this package (built by `npm run build`). */
export function loadPanelAssets(from: string = __dirname): PanelAssets {
  const dir = path.join(packageRoot(from), 'dist', 'webview');
  try {
    return { script: fs.readFileSync(path.join(dir, 'panel.js'), 'utf8'), css: fs.readFileSync(path.join(dir, 'panel.css'), 'utf8') };
  } catch (e) {
    throw new Error(`results panel assets missing in ${dir} (${(e as Error).message}): run 'npm run build'`);
  }
}
