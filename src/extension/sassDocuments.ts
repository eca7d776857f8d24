// The read-only `unroll-lens-sass:` documents: one variant's SASS listing, built by the server
// (SassListingRequest, with a cancellable progress notification). Keeps each listing's line map
// for navigation: F12 / "Go to Source Line" from SASS to source, the source line highlighted
// while the cursor is on its SASS, and the decorations (the loop body, the machine-code loops).
// A save of the source file rebuilds its open listings.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { SASS_SCHEME, SassListingRequest, SassListingResult } from '../protocol';
import { requestWithProgress } from './progress';
import { SassTarget, decodeSassQuery, docRangesOf, encodeSassQuery, factorLabel, sassPath, sourceLineOf } from './sassTarget';

export class SassDocuments implements vscode.TextDocumentContentProvider, vscode.DefinitionProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** The last listing of each open document (key: the sass URI as a string). */
  private readonly results = new Map<string, SassListingResult>();
  /** Requests in flight, so the provider and a command opening the same listing share one. */
  private readonly pending = new Map<string, Promise<SassListingResult | null>>();
  private readonly loopBody = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.rangeHighlightForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly machineLoop = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    borderStyle: 'solid',
    borderWidth: '0 0 0 3px',
    borderColor: new vscode.ThemeColor('editorInfo.foreground'),
  });
  private readonly sourceHighlight = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.findRangeHighlightBackground'),
    borderStyle: 'solid',
    borderWidth: '1px 0 1px 0',
    borderColor: new vscode.ThemeColor('editor.findMatchHighlightBorder'),
  });
  private highlighted: { uri: string; line: number } | null = null;
  private readonly subs: vscode.Disposable[];

  constructor(
    private readonly client: LanguageClient,
    private readonly output: vscode.OutputChannel,
  ) {
    this.subs = [
      vscode.workspace.registerTextDocumentContentProvider(SASS_SCHEME, this),
      vscode.languages.registerDefinitionProvider({ scheme: SASS_SCHEME }, this),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorateAll()),
      vscode.window.onDidChangeTextEditorSelection(e => this.followCursor(e.textEditor)),
      vscode.window.onDidChangeActiveTextEditor(e => this.followCursor(e)),
      vscode.workspace.onDidSaveTextDocument(d => this.sourceSaved(d.uri.toString())),
      vscode.workspace.onDidCloseTextDocument(d => {
        if (d.uri.scheme === SASS_SCHEME) this.results.delete(d.uri.toString());
      }),
    ];
  }

  /** The document URI of a listing. */
  static uriOf(t: SassTarget): vscode.Uri {
    return vscode.Uri.from({ scheme: SASS_SCHEME, path: sassPath(t), query: encodeSassQuery(t) });
  }

  static targetOf(uri: vscode.Uri): SassTarget {
    return decodeSassQuery(uri.query);
  }

  /** The last listing of an open document, if it has one. */
  resultOf(uri: vscode.Uri): SassListingResult | undefined {
    return this.results.get(uri.toString());
  }

  /**
   * Builds (or reuses) the listing of `uri` with a progress notification. Null when the user
   * cancelled; errors are thrown (the command shows them, the provider writes them in the document).
   */
  load(uri: vscode.Uri, token?: vscode.CancellationToken): Promise<SassListingResult | null> {
    const key = uri.toString();
    const have = this.results.get(key);
    if (have) return Promise.resolve(have);
    let p = this.pending.get(key);
    if (!p) {
      const t = SassDocuments.targetOf(uri);
      const title = `Unroll Lens: SASS of line ${t.line} (${factorLabel(t.factor)}${t.arch ? `, ${t.arch}` : ''})`;
      p = Promise.resolve(
        requestWithProgress(
          this.client,
          title,
          SassListingRequest,
          { uri: t.uri, line: t.line, factor: t.factor, arch: t.arch, normalise: t.normalise },
          token,
        ),
      )
        .then(outcome => {
          if (outcome.cancelled) return null;
          this.results.set(key, outcome.result);
          // A document still open with older text (a cancelled or failed build): show the new one.
          const open = vscode.workspace.textDocuments.find(d => d.uri.toString() === key);
          if (open && open.getText() !== outcome.result.text) this.changed.fire(uri);
          return outcome.result;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    try {
      const r = await this.load(uri, token);
      if (!r) return '// Unroll Lens: the SASS listing was cancelled. Run "Unroll Lens: Show SASS" again to build it.\n';
      setTimeout(() => this.decorateAll(), 0);
      return r.text;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.output.appendLine(`SASS listing ${uri.path}: ${message}`);
      return `// Unroll Lens: no SASS listing: ${message.replace(/\n/g, '\n// ')}\n`;
    }
  }

  /** Opens (or reveals) a listing; undefined when it could not be built (the user was told why). */
  async open(t: SassTarget, options: vscode.TextDocumentShowOptions = {}): Promise<vscode.TextEditor | undefined> {
    const uri = SassDocuments.uriOf(t);
    if (!(await this.fetch(uri))) return undefined;
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc, { preview: false, ...options });
    this.decorate(editor);
    return editor;
  }

  /** Builds a listing ahead of opening it (the diff editor opens two); false when it failed or was cancelled. */
  async fetch(uri: vscode.Uri): Promise<boolean> {
    try {
      return (await this.load(uri)) !== null;
    } catch (e) {
      void vscode.window.showErrorMessage(`Unroll Lens: no SASS listing: ${e instanceof Error ? e.message : e}`);
      return false;
    }
  }

  provideDefinition(document: vscode.TextDocument, position: vscode.Position): vscode.Location | undefined {
    const source = this.sourceOf(document.uri, position.line);
    return source ? new vscode.Location(source.uri, new vscode.Position(source.line - 1, 0)) : undefined;
  }

  /** The source file and 1-based line of a listing line, when it has one. */
  sourceOf(uri: vscode.Uri, docLine: number): { uri: vscode.Uri; line: number } | undefined {
    const r = this.results.get(uri.toString());
    const line = r ? sourceLineOf(r, docLine) : null;
    return line === null ? undefined : { uri: vscode.Uri.parse(SassDocuments.targetOf(uri).uri), line };
  }

  /** The listing lines (0-based, inclusive runs) of a 1-based source line. */
  rangesOf(uri: vscode.Uri, sourceLine: number): { from: number; to: number }[] {
    const r = this.results.get(uri.toString());
    return r ? docRangesOf(r, sourceLine) : [];
  }

  private decorateAll(): void {
    for (const e of vscode.window.visibleTextEditors) if (e.document.uri.scheme === SASS_SCHEME) this.decorate(e);
  }

  private decorate(editor: vscode.TextEditor): void {
    const r = this.results.get(editor.document.uri.toString());
    const n = editor.document.lineCount;
    const line = (i: number) => new vscode.Range(i, 0, i, 0);
    editor.setDecorations(this.loopBody, r ? r.loopBodyLines.filter(i => i < n).map(line) : []);
    editor.setDecorations(
      this.machineLoop,
      r
        ? r.machineLoops
            .filter(m => m.firstLine < n)
            .map(m => ({
              range: new vscode.Range(m.firstLine, 0, Math.min(m.lastLine, n - 1), 0),
              hoverMessage: `Machine-code piece ${m.name} of the loop`,
            }))
        : [],
    );
  }

  /** While the cursor is on a SASS line, its source line is highlighted (and revealed) in the source editors. */
  private followCursor(editor: vscode.TextEditor | undefined): void {
    let next: { uri: string; line: number } | null = null;
    if (editor && editor.document.uri.scheme === SASS_SCHEME) {
      const s = this.sourceOf(editor.document.uri, editor.selection.active.line);
      if (s) next = { uri: s.uri.toString(), line: s.line };
    } else if (editor && this.highlighted && editor.document.uri.toString() === this.highlighted.uri) {
      // The user moved into the source editor itself: leave its highlight until they leave the SASS.
      return;
    }
    if (next?.uri === this.highlighted?.uri && next?.line === this.highlighted?.line) return;
    this.highlighted = next;
    for (const e of vscode.window.visibleTextEditors) {
      if (e.document.uri.scheme === SASS_SCHEME) continue;
      if (next && e.document.uri.toString() === next.uri && next.line <= e.document.lineCount) {
        const range = e.document.lineAt(next.line - 1).range;
        e.setDecorations(this.sourceHighlight, [range]);
        e.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      } else e.setDecorations(this.sourceHighlight, []);
    }
  }

  /** The source line highlighted for the SASS cursor (tests read it). */
  get highlightedSource(): { uri: string; line: number } | null {
    return this.highlighted;
  }

  private sourceSaved(source: string): void {
    const open = new Set(vscode.workspace.textDocuments.filter(d => d.uri.scheme === SASS_SCHEME).map(d => d.uri.toString()));
    for (const key of [...this.results.keys()]) {
      const uri = vscode.Uri.parse(key);
      if (vscode.Uri.parse(SassDocuments.targetOf(uri).uri).toString() !== source) continue;
      this.results.delete(key);
      if (open.has(key)) this.changed.fire(uri);
    }
  }

  dispose(): void {
    this.subs.forEach(s => s.dispose());
    this.changed.dispose();
    this.loopBody.dispose();
    this.machineLoop.dispose();
    this.sourceHighlight.dispose();
  }
}
