// Inline decorations after source lines with warp-stall samples from the last GPU benchmark.
import * as vscode from 'vscode';
import type { BenchReport } from '../protocol';
import { lineStallText } from '../engine/report/benchText';

export class StallDecorations implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    after: { margin: '0 0 0 2em', color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
    isWholeLine: false,
  });
  private readonly byUri = new Map<string, BenchReport>();
  private readonly sub = vscode.window.onDidChangeVisibleTextEditors(() => this.render());

  show(uri: string, report: BenchReport): void {
    if (report.lineStalls?.length) this.byUri.set(uri, report);
    this.render();
  }

  private render(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const r = this.byUri.get(editor.document.uri.toString());
      const lines = r?.lineStalls ?? [];
      const total = lines.reduce((a, l) => a + l.samples, 0);
      // Only lines carrying a visible share: a decoration on every line would be noise.
      const decorations = lines.filter(l => l.samples / Math.max(1, total) >= 0.01 && l.line <= editor.document.lineCount).map(l => ({
        range: editor.document.lineAt(l.line - 1).range,
        renderOptions: { after: { contentText: `⏱ ${lineStallText(l, total)}` } },
      }));
      editor.setDecorations(this.type, decorations);
    }
  }

  dispose(): void {
    this.sub.dispose();
    this.type.dispose();
  }
}
