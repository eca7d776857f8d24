// Status bar item: what the server found in the active CUDA file.
import * as vscode from 'vscode';
import { AnalysisStatus, Commands, ToolchainStatus } from '../protocol';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('unrollLens.status', vscode.StatusBarAlignment.Right, 100);
  private readonly byUri = new Map<string, AnalysisStatus>();
  private tools: ToolchainStatus | null = null;
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

  /** Toolchain line from the server: "nvcc 13.0 · sm_90 · H200", or the missing tool. */
  toolchain(s: ToolchainStatus): void {
    this.tools = s;
    this.render();
  }

  update(s: AnalysisStatus): void {
    this.byUri.set(s.uri, s);
    this.render();
  }

  private render(): void {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    const s = uri ? this.byUri.get(uri) : undefined;
    const t = this.tools;
    const toolText = t ? (t.building ? ` · $(sync~spin) ${t.building}` : t.summary ? ` · ${t.summary}` : ' · $(warning) no nvcc') : '';
    const toolTip = t ? `\n${t.summary ?? 'CUDA toolchain not found'}${t.problem ? `\n${t.problem}` : ''}` : '';
    if (!s) {
      this.item.text = `$(pulse) Unroll Lens${toolText}`;
      this.item.tooltip = `Unroll Lens is running. Open a .cu or .cuh file to see its loops.${toolTip}`;
    } else {
      this.item.text = `$(pulse) ${plural(s.loops, 'loop')} · ${plural(s.pragmas, 'pragma')}${s.manualUnrolls ? ` · ${s.manualUnrolls} manual` : ''}${s.hasSyntaxErrors ? ' $(warning)' : ''}${toolText}`;
      this.item.tooltip =
        `Unroll Lens: ${s.kernels} device functions, ${s.loops} loops, ${s.pragmas} unroll pragmas, ` +
        `${s.manualUnrolls} manual unrolls (analysed in ${s.elapsedMs.toFixed(1)} ms)` +
        (s.hasSyntaxErrors ? '\nThe file has syntax errors: results are best effort.' : '') +
        toolTip +
        '\nClick for the server log.';
    }
    this.item.show();
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
