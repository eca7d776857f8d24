// Messages between the extension host and the results-panel webview (webview/src/), and the state
// the webview persists with `vscode.setState` (what the host's WebviewPanelSerializer receives
// after a window reload). Types only: both the host (Node) and the webview (browser) import it.
import type { SweepResult } from './protocol';

/** Progress of a running sweep, shown above the charts with a Cancel button. */
export interface PanelProgress {
  message: string;
  done: number;
  /** Variants in all, or with atMost an upper bound (the strategy may finish below it). */
  total: number;
  atMost?: boolean;
}

// ------------------------------------------------------------------ host → webview

/**
 * The result to show. Sent once when the panel opens (after `ready`) and again on every change
 * while a sweep runs: variants arrive one by one (status `pending` until done), charts update in
 * place. `progress` set (and `result.complete` false) shows the progress line and Cancel.
 */
interface ResultMessage {
  type: 'result';
  result: SweepResult;
  progress?: PanelProgress | null;
}

/** Selects a variant (e.g. from a CodeLens); null clears the selection. Posts nothing back. */
interface SelectMessage {
  type: 'select';
  variantId: string | null;
}

export type HostToWebviewMessage = ResultMessage | SelectMessage;

// ------------------------------------------------------------------ webview → host

/** The script has loaded and listens; the host answers with a `result` message. */
interface ReadyMessage {
  type: 'ready';
}

/** A variant was clicked (chart bar or table row): show its code / loop in the editor. */
interface RevealMessage {
  type: 'reveal';
  variantId: string;
}

/** Apply this variant's unroll factors (and params) to the source file. */
interface ApplyMessage {
  type: 'apply';
  variantId: string;
}

/** Save the result: `csv` (the table) or `t4` (the JSON export format). */
interface ExportMessage {
  type: 'export';
  format: 'csv' | 't4';
}

/** Stop the running sweep. */
interface CancelMessage {
  type: 'cancel';
}

export type WebviewToHostMessage = ReadyMessage | RevealMessage | ApplyMessage | ExportMessage | CancelMessage;

// ------------------------------------------------------------------ persisted state

export type SortDirection = 'asc' | 'desc';

/**
 * What the webview stores with `setState` after every change; the host's serializer gets it back
 * in `deserializeWebviewPanel(panel, state)` and can re-send `state.result` (or a fresher one).
 */
export interface PanelState {
  version: 1;
  /** The last result shown; null before the first one arrives. */
  result: SweepResult | null;
  selected: string | null;
  sort: { column: string; direction: SortDirection } | null;
}
