// The bridge to the extension host. Inside a VS Code webview `acquireVsCodeApi` exists (callable
// once); without it the page is a standalone HTML report: no host to post to, the result is
// embedded in the page, and host-only controls (Apply, Export, Cancel) are hidden.
import type { HostToWebviewMessage, PanelProgress, PanelState, WebviewToHostMessage } from '../../src/panelMessages';
import type { SweepResult } from '../../src/protocol';
import { RANGES, rangeProblem } from '../../src/schema/ranges';
import { sweepResultProblem } from '../../src/schema/result';

export type { HostToWebviewMessage };

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
        result: checkedResult(s.result),
        selected: typeof s.selected === 'string' ? s.selected : null,
        sort: s.sort && typeof s.sort.column === 'string' && (s.sort.direction === 'asc' || s.sort.direction === 'desc') ? s.sort : null,
      };
    },
  };
}

/**
 * A result the panel may show: the whole SweepResult checked field by field, every number in its
 * range (src/schema/result.ts, the same check as the server's when it loads a file). A malformed
 * or impossible one (a forged median of -7 ms, an unroll factor of -4) is dropped, never drawn.
 */
function checkedResult(x: unknown): SweepResult | null {
  const checked = sweepResultProblem(x);
  return 'result' in checked ? checked.result : null;
}

function isProgress(p: unknown): p is PanelProgress {
  const x = p as PanelProgress | null;
  return (
    !!x &&
    typeof x.message === 'string' &&
    !rangeProblem(RANGES.count, x.done) &&
    !rangeProblem(RANGES.count, x.total) &&
    (x.atMost === undefined || typeof x.atMost === 'boolean')
  );
}

export function parseHostMessage(data: unknown): HostToWebviewMessage | null {
  const m = data as { type?: unknown } | null;
  if (!m || typeof m !== 'object') return null;
  if (m.type === 'result') {
    const r = data as { result?: unknown; progress?: unknown };
    const result = checkedResult(r.result);
    if (!result) return null;
    return { type: 'result', result, progress: isProgress(r.progress) ? r.progress : null };
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
    return checkedResult(JSON.parse(el.textContent));
  } catch {
    return null;
  }
}
