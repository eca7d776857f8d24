// The results panel on the host side: one webview panel per loop or sweep (titled with kernel and
// loop lines), fed SweepResults as they arrive, restored after a window reload by a serializer,
// and the actions its buttons ask for: reveal the loop, Apply a variant's factors as an ordinary
// undoable edit, export CSV / T4 JSON, cancel a running sweep.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { makeNonce, panelHtml } from '../../panelHtml';
import type { HostToWebviewMessage, PanelProgress, PanelState, WebviewToHostMessage } from '../../panelMessages';
import { ExportResultRequest, PragmaEditsRequest, RESULTS_VIEW_TYPE, SweepResult, SweepVariant } from '../../protocol';
import { sweepResultProblem } from '../../schema/result';
import { comparisonAsVariants, isComparison } from '../../schema/comparison';

/**
 * One panel per kernel and loop set: a second run of the same loops reuses (and refreshes) it. A
 * kernel comparison is about the file's program, whichever kernels it names: one panel per file.
 */
function panelKey(r: Pick<SweepResult, 'file' | 'kernel' | 'loops' | 'origin'>): string {
  if (isComparison(r)) return `${r.file}|compare`;
  return `${r.file}|${r.kernel}|${r.loops.map(l => l.line).join(',')}|${r.origin}`;
}

function panelTitle(r: Pick<SweepResult, 'kernel' | 'loops' | 'origin' | 'file'>): string {
  if (isComparison(r)) return `${r.file.replace(/^.*[\\/]/, '')} · compare`;
  const loops = r.loops.map(l => `L${l.line}`).join(' ');
  const what = r.origin === 'sweep' ? 'sweep' : r.origin === 'bench' ? 'benchmark' : 'SASS';
  return `${r.kernel}${loops ? ` · ${loops}` : ''} · ${what}`;
}

class ResultsPanel {
  /** What the panel shows now. */
  result: SweepResult | null = null;
  private progress: PanelProgress | null = null;
  private ready = false;
  /** Cancels the run feeding this panel, while one does. */
  onCancel: (() => void) | null = null;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly owner: ResultsPanels,
    initial: SweepResult | null,
  ) {
    this.result = initial;
    const webview = panel.webview;
    const dist = vscode.Uri.joinPath(owner.extensionUri, 'dist', 'webview');
    webview.options = { enableScripts: true, localResourceRoots: [dist] };
    webview.html = panelHtml({
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'panel.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'panel.css')).toString(),
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      title: panel.title,
    });
    webview.onDidReceiveMessage((m: WebviewToHostMessage) => void this.onMessage(m).catch(e => owner.fail(e)));
  }

  show(result: SweepResult, progress: PanelProgress | null): void {
    this.result = result;
    this.progress = progress;
    this.panel.title = panelTitle(result);
    this.post({ type: 'result', result, progress });
  }

  private post(m: HostToWebviewMessage): void {
    if (this.ready) void this.panel.webview.postMessage(m);
  }

  private async onMessage(m: WebviewToHostMessage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.ready = true;
        if (this.result) this.post({ type: 'result', result: this.result, progress: this.progress });
        return;
      case 'cancel':
        this.onCancel?.();
        return;
      case 'reveal':
        if (this.result) await this.owner.reveal(this.result, this.variant(m.variantId));
        return;
      case 'apply':
        if (this.result) await this.owner.apply(this.result, this.variant(m.variantId));
        return;
      case 'export':
        if (this.result) await this.owner.export(this.result, m.format);
        return;
    }
  }

  private variant(id: string): SweepVariant | undefined {
    return this.result ? rowOf(this.result, id) : undefined;
  }
}

/** The row a panel message names: a variant, or in a comparison one of its kernels (as the panel shows them). */
export function rowOf(r: SweepResult, id: string): SweepVariant | undefined {
  return (isComparison(r) ? comparisonAsVariants(r) : r).variants.find(v => v.id === id);
}

export class ResultsPanels implements vscode.Disposable {
  private readonly panels = new Map<string, ResultsPanel>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly extensionUri: vscode.Uri,
    private readonly client: LanguageClient,
    private readonly output: vscode.OutputChannel,
  ) {
    // After a window reload VS Code recreates the panel and hands back what the webview stored.
    this.disposables.push(
      vscode.window.registerWebviewPanelSerializer(RESULTS_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel: vscode.WebviewPanel, state: unknown) => {
          const result = this.restored((state as PanelState | undefined)?.result ?? null);
          const p = this.adopt(panel, result);
          if (result) p.show(result, null);
        },
      }),
    );
  }

  /** A result the webview stored, checked like a result file: one with an impossible number is not shown again. */
  private restored(value: unknown): SweepResult | null {
    if (value === null || value === undefined) return null;
    const checked = sweepResultProblem(value);
    if ('result' in checked) return checked.result;
    this.output.appendLine(`results panel: the restored result is not shown: ${checked.problem}`);
    return null;
  }

  /** The panel for this result's loops (created beside the editor when there is none) showing `result`. */
  open(result: SweepResult, progress: PanelProgress | null = null): ResultsPanel {
    const key = panelKey(result);
    let p = this.panels.get(key);
    if (!p) {
      const panel = vscode.window.createWebviewPanel(
        RESULTS_VIEW_TYPE,
        panelTitle(result),
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        {
          enableScripts: true,
          retainContextWhenHidden: true,
          localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
        },
      );
      p = this.adopt(panel, result);
    } else {
      p.panel.reveal(undefined, true);
    }
    p.show(result, progress);
    return p;
  }

  private adopt(panel: vscode.WebviewPanel, result: SweepResult | null): ResultsPanel {
    const p = new ResultsPanel(panel, this, result);
    const key = result ? panelKey(result) : `restored-${Date.now()}-${Math.random()}`;
    this.panels.set(key, p);
    panel.onDidDispose(() => {
      p.onCancel?.();
      for (const [k, v] of this.panels) if (v === p) this.panels.delete(k);
    });
    return p;
  }

  /** Open panels (tests and the sweep command read them). */
  get all(): { title: string; result: SweepResult | null }[] {
    return [...this.panels.values()].map(p => ({ title: p.panel.title, result: p.result }));
  }

  fail(e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    this.output.appendLine(`results panel: ${msg}`);
    void vscode.window.showErrorMessage(`Unroll Lens: ${msg}`);
  }

  /** The open document of the result's file (opened when it is not: the server still checks it before any edit). */
  private async document(result: SweepResult): Promise<vscode.TextDocument> {
    const open = vscode.workspace.textDocuments.find(d => d.uri.scheme === 'file' && d.uri.fsPath === vscode.Uri.file(result.file).fsPath);
    return open ?? vscode.workspace.openTextDocument(vscode.Uri.file(result.file));
  }

  /** Shows the swept loop (the first whose factor this variant sets) in the editor; for a comparison, its file's first kernel. */
  async reveal(result: SweepResult, v: SweepVariant | undefined): Promise<void> {
    // a comparison's row is a kernel: its own definition (compareLines), else the result's kernel
    const own = isComparison(result) && v?.kernel ? result.compareLines?.[v.kernel] : undefined;
    const line = own ?? Number(Object.keys(v?.factors ?? {})[0] ?? result.loops[0]?.line ?? result.kernelLine);
    const editor = await vscode.window.showTextDocument(await this.document(result), {
      viewColumn: vscode.ViewColumn.One,
      preserveFocus: false,
    });
    const pos = new vscode.Position(Math.max(0, line - 1), 0);
    editor.selection = new vscode.Selection(pos, pos);
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  /**
   * Writes the variant's unroll factors into the user's document as one undoable edit (the file is
   * not saved: the user sees the change and keeps or undoes it). Macro parameters cannot be written
   * as pragmas: they are named so the user sets them in the build.
   */
  async apply(result: SweepResult, v: SweepVariant | undefined, confirmed = false): Promise<boolean> {
    // a comparison's rows are different kernels, not factors of the file: nothing to write
    if (!v || isComparison(result)) return false;
    const doc = await this.document(result);
    const factors =
      v.id === result.baseline && !Object.keys(v.factors).length
        ? Object.fromEntries(result.loops.map(l => [String(l.line), l.written]))
        : v.factors;
    // The user says yes to this file before it changes (a saved result is a file anyone could write).
    if (!confirmed) {
      const where = vscode.workspace.asRelativePath(doc.uri);
      const yes = await vscode.window.showWarningMessage(
        `Unroll Lens: apply ${v.label} to ${where}?`,
        { modal: true, detail: `The unroll pragmas of lines ${Object.keys(factors).join(', ')} of ${where} change (Undo reverts).` },
        'Apply',
      );
      if (yes !== 'Apply') return false;
    }
    // The server checks that this document is the one the result was measured from (see applyTarget.ts).
    const measured = {
      file: result.file,
      sourceSha256: result.sourceSha256,
      loops: result.loops.map(l => ({ line: l.line, written: l.written })),
    };
    const { edits, problems } = await this.client.sendRequest(PragmaEditsRequest, { uri: doc.uri.toString(), factors, measured });
    for (const p of problems) this.output.appendLine(`apply ${v.label}: ${p}`);
    if (problems.length) {
      void vscode.window.showWarningMessage(`Unroll Lens: cannot apply ${v.label}: ${problems[0]}`);
      return false;
    }
    const params = Object.entries(v.params);
    if (edits.length) {
      const edit = new vscode.WorkspaceEdit();
      for (const e of edits) {
        edit.replace(
          doc.uri,
          new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character),
          e.newText,
        );
      }
      if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`the editor refused the edit for ${v.label}`);
    }
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    const paramNote = params.length
      ? ` Set ${params.map(([k, x]) => `${k}=${x}`).join(', ')} in your build (a -D macro) or launch (a template argument): parameters are not pragmas.`
      : '';
    void vscode.window.showInformationMessage(
      edits.length
        ? `Unroll Lens: applied ${v.label} (${edits.length} pragma edit${edits.length === 1 ? '' : 's'}; Undo reverts).${paramNote}`
        : `Unroll Lens: the file already has the factors of ${v.label}.${paramNote}`,
    );
    return edits.length > 0;
  }

  /** Saves the result as CSV or T4 JSON where the user picks. */
  async export(result: SweepResult, format: 'csv' | 't4'): Promise<vscode.Uri | undefined> {
    const { text, fileName } = await this.client.sendRequest(ExportResultRequest, { result, format });
    const folder =
      vscode.workspace.getWorkspaceFolder(vscode.Uri.file(result.file))?.uri ??
      vscode.Uri.file(result.file).with({ path: result.file.replace(/[^/]+$/, '') });
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(folder, fileName),
      filters: format === 'csv' ? { CSV: ['csv'] } : { 'T4 JSON': ['json'] },
    });
    if (!target) return undefined;
    await vscode.workspace.fs.writeFile(target, Buffer.from(text, 'utf8'));
    void vscode.window.showInformationMessage(`Unroll Lens: saved ${vscode.workspace.asRelativePath(target)}`);
    return target;
  }

  dispose(): void {
    for (const p of this.panels.values()) p.panel.dispose();
    this.panels.clear();
    for (const d of this.disposables) d.dispose();
  }
}
