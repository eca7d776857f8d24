// VS Code theme colours and fonts for the charts. panel.css maps the --vscode-* variables (set
// by VS Code on <html>) to --ul-* variables with fallbacks for the standalone report; canvas
// drawing cannot use CSS variables, so the resolved values are read here and handed to chart.js.

type ThemeKind = 'light' | 'dark' | 'high-contrast' | 'high-contrast-light';

export interface Theme {
  kind: ThemeKind;
  foreground: string;
  muted: string;
  background: string;
  grid: string;
  border: string;
  /** Bar outlines: the contrast border in high-contrast themes, else none. */
  contrastBorder: string | null;
  focus: string;
  fontFamily: string;
  fontSize: number;
  tooltipBackground: string;
  tooltipForeground: string;
  tooltipBorder: string;
  red: string;
  blue: string;
  green: string;
  yellow: string;
  orange: string;
  purple: string;
  grey: string;
}

function kindOf(body: HTMLElement): ThemeKind {
  if (body.classList.contains('vscode-high-contrast-light')) return 'high-contrast-light';
  if (body.classList.contains('vscode-high-contrast')) return 'high-contrast';
  if (body.classList.contains('vscode-dark')) return 'dark';
  if (body.classList.contains('vscode-light')) return 'light';
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function readTheme(): Theme {
  const body = document.body;
  const css = getComputedStyle(body);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const kind = kindOf(body);
  const hc = kind === 'high-contrast' || kind === 'high-contrast-light';
  const fontSize = Number.parseFloat(v('--ul-font-size', '13'));
  return {
    kind,
    foreground: v('--ul-fg', '#333333'),
    muted: v('--ul-muted', '#6c6c6c'),
    background: v('--ul-bg', '#ffffff'),
    grid: v('--ul-grid', 'rgba(128,128,128,0.35)'),
    border: v('--ul-border', 'rgba(128,128,128,0.35)'),
    contrastBorder: hc ? v('--ul-contrast-border', v('--ul-fg', '#000000')) : null,
    focus: v('--ul-focus', '#0090f1'),
    fontFamily: v('--ul-font', 'system-ui, sans-serif'),
    fontSize: Number.isFinite(fontSize) && fontSize > 6 ? fontSize : 13,
    tooltipBackground: v('--ul-hover-bg', '#f3f3f3'),
    tooltipForeground: v('--ul-hover-fg', '#333333'),
    tooltipBorder: v('--ul-hover-border', '#c8c8c8'),
    red: v('--ul-red', '#e51400'),
    blue: v('--ul-blue', '#1a85ff'),
    green: v('--ul-green', '#388a34'),
    yellow: v('--ul-yellow', '#bf8803'),
    orange: v('--ul-orange', '#d18616'),
    purple: v('--ul-purple', '#652d90'),
    grey: v('--ul-grey', '#8b8b8b'),
  };
}

/**
 * Calls `onChange` when VS Code switches theme (it swaps the body class and the variables on
 * <html>) or, standalone, when the OS colour scheme flips. Coalesced to one call per frame.
 */
export function watchTheme(onChange: () => void): void {
  let queued = false;
  const fire = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      onChange();
    });
  };
  const mo = new MutationObserver(fire);
  mo.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  mo.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', fire);
}

/** A solid colour at reduced opacity, as a canvas pattern (works for any CSS colour syntax). */
export function faded(color: string, alpha: number): CanvasPattern | string {
  const c = document.createElement('canvas');
  c.width = c.height = 4;
  const ctx = c.getContext('2d');
  if (!ctx) return color;
  ctx.globalAlpha = alpha;
  ctx.fillStyle = color;
  ctx.fillRect(0, 0, 4, 4);
  return ctx.createPattern(c, 'repeat') ?? color;
}

/** Diagonal hatching in `color` over a faint fill: marks bars that are within noise. */
export function hatched(color: string): CanvasPattern | string {
  const size = 8;
  const c = document.createElement('canvas');
  c.width = c.height = size;
  const ctx = c.getContext('2d');
  if (!ctx) return color;
  ctx.globalAlpha = 0.18;
  ctx.fillStyle = color;
  ctx.fillRect(0, 0, size, size);
  ctx.globalAlpha = 1;
  ctx.strokeStyle = color;
  ctx.lineWidth = 2;
  ctx.beginPath();
  // Three strokes so the stripes continue across tile edges.
  for (const o of [-size, 0, size]) {
    ctx.moveTo(o, size);
    ctx.lineTo(o + size, 0);
  }
  ctx.stroke();
  return ctx.createPattern(c, 'repeat') ?? color;
}
