// The bridge to the extension host. Inside a VS Code webview `acquireVsCodeApi` exists (callable
// once); without it the page is a standalone HTML report: no host to post to, the result is
// embedded in the page, and host-only controls (Apply, Export, Cancel) are hidden.
import type { HostToWebviewMessage, PanelProgress, PanelState, WebviewToHostMessage } from '../../src/panelMessages';
import type { SweepResult } from '../../src/protocol';

export type { HostToWebviewMessage, PanelProgress, PanelState, WebviewToHostMessage };

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  // Provided by VS Code inside webviews only.
  var acquireVsCodeApi: (() => VsCodeApi) | undefined;
}

export interface Host {
  readonly standalone: boolean;
  post(message: WebviewToHostMessage): void;
  saveState(state: PanelState): void;
  loadState(): PanelState | null;
}

export function connectHost(): Host {
  const api = typeof globalThis.acquireVsCodeApi === 'function' ? globalThis.acquireVsCodeApi() : null;
  if (!api) {
    return { standalone: true, post: () => undefined, saveState: () => undefined, loadState: () => null };
  }
  return {
    standalone: false,
    post: m => api.postMessage(m),
    saveState: s => api.setState(s),
    loadState: () => {
      const s = api.getState() as Partial<PanelState> | undefined;
      if (!s || s.version !== 1) return null;
      return {
        version: 1,
        result: isSweepResult(s.result) ? s.result : null,
        selected: typeof s.selected === 'string' ? s.selected : null,
        sort: s.sort && typeof s.sort.column === 'string' && (s.sort.direction === 'asc' || s.sort.direction === 'desc') ? s.sort : null,
      };
    },
  };
}

/** Enough shape checking that a malformed message is dropped instead of breaking the panel. */
export function isSweepResult(x: unknown): x is SweepResult {
  const r = x as SweepResult | null;
  return (
    !!r &&
    typeof r === 'object' &&
    r.schema === 1 &&
    Array.isArray(r.variants) &&
    Array.isArray(r.loops) &&
    typeof r.kernel === 'string' &&
    typeof r.file === 'string' &&
    r.variants.every(v => !!v && typeof v.id === 'string' && typeof v.label === 'string' && typeof v.status === 'string')
  );
}

function isProgress(p: unknown): p is PanelProgress {
  const x = p as PanelProgress | null;
  return !!x && typeof x.message === 'string' && typeof x.done === 'number' && typeof x.total === 'number';
}

export function parseHostMessage(data: unknown): HostToWebviewMessage | null {
  const m = data as { type?: unknown } | null;
  if (!m || typeof m !== 'object') return null;
  if (m.type === 'result') {
    const r = data as { result?: unknown; progress?: unknown };
    if (!isSweepResult(r.result)) return null;
    return { type: 'result', result: r.result, progress: isProgress(r.progress) ? r.progress : null };
  }
  if (m.type === 'select') {
    const id = (data as { variantId?: unknown }).variantId;
    return typeof id === 'string' || id === null ? { type: 'select', variantId: id } : null;
  }
  return null;
}

/** The result embedded in a standalone report (`<script type="application/json" id="sweep-data">`). */
export function embeddedResult(): SweepResult | null {
  const el = document.getElementById('sweep-data');
  if (!el?.textContent) return null;
  try {
    const r: unknown = JSON.parse(el.textContent);
    return isSweepResult(r) ? r : null;
  } catch {
    return null;
  }
}
