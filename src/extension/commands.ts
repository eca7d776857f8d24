// Command handlers. Benchmark and sweep need the compiler/GPU pipeline of later releases; they
// are registered and receive their loop/kernel now so CodeLens and palette entries are wired.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  BenchmarkLoopArgs, Commands, FileAnalysisRequest, LoopVariantsParams, LoopVariantsRequest, SweepKernelArgs, BenchLoopParams, BenchLoopRequest,
} from '../protocol';
import { StallDecorations } from './stallDecorations';
import { WorkDoneProgress } from 'vscode-languageclient/node';

export function registerCommands(context: vscode.ExtensionContext, client: LanguageClient, output: vscode.OutputChannel): void {
  const decorations = new StallDecorations();
  context.subscriptions.push(decorations);
  const reg = (id: string, fn: (...args: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  // Build, check, time and profile every unroll factor of the loop on the GPU (ncu).
  reg(Commands.benchmarkLoop, async (args?: BenchmarkLoopArgs) => {
    const target = args ?? (await pickLoop(client));
    if (!target) return undefined;
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Unroll Lens: benchmarking line ${target.line} on the GPU`, cancellable: true }, async (progress, token) => {
      const workDoneToken = `unroll-lens-bench-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      let last = 0;
      const sub = client.onProgress(WorkDoneProgress.type, workDoneToken, p => {
        if (p.kind === 'report') {
          const inc = p.percentage !== undefined ? p.percentage - last : undefined;
          if (p.percentage !== undefined) last = p.percentage;
          progress.report({ increment: inc, message: p.message });
        }
      });
      try {
        const params: BenchLoopParams = { uri: target.uri, line: target.line, workDoneToken };
        const report = await client.sendRequest(BenchLoopRequest, params, token);
        decorations.show(target.uri, report.lineStalls);
        for (const v of report.variants) {
          output.appendLine(`bench ${target.kernel}:${target.line} ${v.label}: ${v.status}${v.medianMs !== null ? ` median ${v.medianMs.toFixed(4)} ms IQR ${v.iqrMs?.toFixed(4)} speedup ${v.speedup?.toFixed(2)}${v.withinNoise ? ' (noise)' : ''}` : ''}${v.message ? ` — ${v.message}` : ''}`);
        }
        const best = report.variants.find(v => v.label === report.fastest);
        const failed = report.variants.filter(v => v.status !== 'ok');
        void vscode.window.showInformationMessage(`Unroll Lens: ${best ? `fastest: ${best.label} (${best.speedup?.toFixed(2)}× vs as written${best.withinNoise && best.label !== report.baseline ? ', within noise' : ''})` : 'no variant ran'}` +
          `${failed.length ? `; ${failed.length} failed (${failed.map(v => `${v.label}: ${v.status}`).join(', ')})` : ''}. Hover the loop for the table.`);
        return report;
      } catch (e) {
        if (token.isCancellationRequested) {
          void vscode.window.showInformationMessage('Unroll Lens: benchmark cancelled; nothing was left running.');
          return undefined;
        }
        const msg = e instanceof Error ? e.message : String(e);
        output.appendLine(`bench failed: ${msg}`);
        void vscode.window.showErrorMessage(`Unroll Lens: ${msg}`);
        return { error: msg };
      } finally {
        sub.dispose();
      }
    });
  });

  reg(Commands.sweepKernel, async (args?: SweepKernelArgs) => {
    const target = args ?? (await pickKernel(client));
    if (!target) return undefined;
    const msg = `Sweep of unroll factors for ${target.kernel}: not available yet (comes with variant builds in a later release).`;
    output.appendLine(msg);
    void vscode.window.showInformationMessage(`Unroll Lens: ${msg}`);
    return { status: 'not-available', ...target };
  });

  reg(Commands.showLoops, async (args?: { uri: string; line: number }) => {
    const uri = args?.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      void vscode.window.showWarningMessage('Unroll Lens: open a .cu or .cuh file first.');
      return;
    }
    const analysis = await client.sendRequest(FileAnalysisRequest, { uri });
    if (!analysis) {
      void vscode.window.showWarningMessage('Unroll Lens: this file is not a CUDA file the server has open.');
      return;
    }
    const items = analysis.kernels.flatMap(k => k.loops.map(l => ({
      label: `$(symbol-event) ${l.kind} · line ${l.line}`,
      description: `${k.name} · ${l.summary}`,
      line: l.line,
    })));
    if (!items.length) {
      void vscode.window.showInformationMessage('Unroll Lens: no loops in device code in this file.');
      return;
    }
    const picked = await vscode.window.showQuickPick(items, { placeHolder: 'Loops in device code' });
    if (picked) {
      const editor = await vscode.window.showTextDocument(vscode.Uri.parse(uri));
      const pos = new vscode.Position(picked.line - 1, 0);
      editor.selection = new vscode.Selection(pos, pos);
      editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenter);
    }
  });

  reg(Commands.showOutput, () => output.show(true));

  // Build every unroll factor of one loop: progress in a notification, cancellable; the result
  // shows in the loop's hover and CodeLens.
  reg(Commands.sassVariants, async (args?: { uri: string; line: number }) => {
    const target = args ?? (await pickLoop(client));
    if (!target) return undefined;
    // The server builds from the editor's current text (shadow copies); the file is never saved or touched.
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Unroll Lens: unroll variants of line ${target.line}`, cancellable: true }, async (progress, token) => {
      const workDoneToken = `unroll-lens-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      let last = 0;
      const sub = client.onProgress(WorkDoneProgress.type, workDoneToken, p => {
        if (p.kind === 'report' && p.percentage !== undefined) {
          progress.report({ increment: p.percentage - last, message: p.message });
          last = p.percentage;
        } else if (p.kind === 'report' && p.message) progress.report({ message: p.message });
      });
      try {
        const params: LoopVariantsParams = { uri: target.uri, line: target.line, workDoneToken };
        const report = await client.sendRequest(LoopVariantsRequest, params, token);
        const ok = report.variants.filter(v => v.status === 'ok').length;
        output.appendLine(`variants of line ${target.line}: ${report.variants.map(v => `${v.factor}=${v.status === 'ok' ? `${v.kernelInstructions} instr ×${v.effectiveUnroll ?? '?'}` : v.status}`).join(', ')}`);
        for (const n of report.notes) output.appendLine(`  note: ${n}`);
        void vscode.window.showInformationMessage(`Unroll Lens: ${ok}/${report.variants.length} variants built for line ${target.line}. Hover the loop for the table.${report.notes.length ? ` ${report.notes[0]}.` : ''}`);
        return report;
      } catch (e) {
        if (token.isCancellationRequested) {
          void vscode.window.showInformationMessage('Unroll Lens: variant build cancelled.');
          return undefined;
        }
        void vscode.window.showErrorMessage(`Unroll Lens: ${e instanceof Error ? e.message : e}`);
        return undefined;
      } finally {
        sub.dispose();
      }
    });
  });
}

async function activeAnalysis(client: LanguageClient) {
  const uri = vscode.window.activeTextEditor?.document.uri.toString();
  if (!uri) return null;
  const analysis = await client.sendRequest(FileAnalysisRequest, { uri });
  return analysis ? { uri, analysis } : null;
}

/** Palette entry without a CodeLens: the loop under the cursor, else a pick. */
async function pickLoop(client: LanguageClient): Promise<BenchmarkLoopArgs | undefined> {
  const a = await activeAnalysis(client);
  if (!a) {
    void vscode.window.showWarningMessage('Unroll Lens: open a CUDA file and put the cursor on a loop.');
    return undefined;
  }
  const cursor = (vscode.window.activeTextEditor?.selection.active.line ?? -1) + 1;
  const loops = a.analysis.kernels.flatMap(k => k.loops.map(l => ({ k, l })));
  const under = loops.filter(({ l }) => cursor >= l.startLine && cursor <= l.endLine).sort((x, y) => y.l.depth - x.l.depth)[0];
  if (under) return { uri: a.uri, line: under.l.line, kernel: under.k.name };
  const pick = await vscode.window.showQuickPick(loops.map(({ k, l }) => ({ label: `line ${l.line}`, description: `${k.name} · ${l.summary}`, k, l })));
  return pick ? { uri: a.uri, line: pick.l.line, kernel: pick.k.name } : undefined;
}

async function pickKernel(client: LanguageClient): Promise<SweepKernelArgs | undefined> {
  const a = await activeAnalysis(client);
  if (!a) {
    void vscode.window.showWarningMessage('Unroll Lens: open a CUDA file first.');
    return undefined;
  }
  const kernels = a.analysis.kernels.filter(k => k.qualifier === 'global');
  const pick = await vscode.window.showQuickPick(kernels.map(k => ({ label: k.name, description: `line ${k.line}`, k })), { placeHolder: 'Kernel to sweep' });
  return pick ? { uri: a.uri, line: pick.k.line, kernel: pick.k.name } : undefined;
}
