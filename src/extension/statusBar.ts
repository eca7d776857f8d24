// Status bar item: what the server found in the active CUDA file.
import * as vscode from 'vscode';
import { AnalysisStatus, Commands } from '../protocol';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('unrollLens.status', vscode.StatusBarAlignment.Right, 100);
  private readonly byUri = new Map<string, AnalysisStatus>();
  private readonly sub: vscode.Disposable;

  constructor() {
    this.item.name = 'Unroll Lens';
    this.item.command = Commands.showOutput;
    this.sub = vscode.window.onDidChangeActiveTextEditor(() => this.render());
  }

  starting(): void {
    this.item.text = '$(sync~spin) Unroll Lens';
    this.item.tooltip = 'Unroll Lens: starting the CUDA language server';
    this.item.show();
  }

  ready(): void {
    this.render();
  }

  failed(reason: string): void {
    this.item.text = '$(error) Unroll Lens';
    this.item.tooltip = `Unroll Lens: the language server failed to start: ${reason}`;
    this.item.show();
  }

  update(s: AnalysisStatus): void {
    this.byUri.set(s.uri, s);
    this.render();
  }

  private render(): void {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    const s = uri ? this.byUri.get(uri) : undefined;
    if (!s) {
      this.item.text = '$(pulse) Unroll Lens';
      this.item.tooltip = 'Unroll Lens is running. Open a .cu or .cuh file to see its loops.';
    } else {
      this.item.text = `$(pulse) ${plural(s.loops, 'loop')} · ${plural(s.pragmas, 'pragma')}${s.manualUnrolls ? ` · ${s.manualUnrolls} manual` : ''}${s.hasSyntaxErrors ? ' $(warning)' : ''}`;
      this.item.tooltip = `Unroll Lens: ${s.kernels} device functions, ${s.loops} loops, ${s.pragmas} unroll pragmas, ` +
        `${s.manualUnrolls} manual unrolls (analysed in ${s.elapsedMs.toFixed(1)} ms)` +
        (s.hasSyntaxErrors ? '\nThe file has syntax errors: results are best effort.' : '') + '\nClick for the server log.';
    }
    this.item.show();
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
