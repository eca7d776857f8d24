// Inline decorations after source lines with warp-stall samples from the last GPU benchmark.
// The server picks the lines and writes their text; this only places it.
import * as vscode from 'vscode';
import type { LineStallNote } from '../protocol';

export class StallDecorations implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    after: { margin: '0 0 0 2em', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
    isWholeLine: false,
  });
  private readonly byUri = new Map<string, LineStallNote[]>();
  private readonly sub = vscode.window.onDidChangeVisibleTextEditors(() => this.render());

  /** A benchmark without stall samples keeps the notes of the previous one. */
  show(uri: string, notes: LineStallNote[]): void {
    if (notes.length) this.byUri.set(uri, notes);
    this.render();
  }

  private render(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const notes = this.byUri.get(editor.document.uri.toString()) ?? [];
      // The file may have shrunk since the benchmark.
      const decorations = notes
        .filter(n => n.line <= editor.document.lineCount)
        .map(n => ({
          range: editor.document.lineAt(n.line - 1).range,
          renderOptions: { after: { contentText: `⏱ ${n.text}` } },
        }));
      editor.setDecorations(this.type, decorations);
    }
  }

  dispose(): void {
    this.sub.dispose();
    this.type.dispose();
  }
}
