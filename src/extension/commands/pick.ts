// Targets for commands run from the palette (no CodeLens arguments): the loop under the cursor,
// else a pick from the loops or kernels the server found in the active file.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { BenchmarkLoopArgs, FileAnalysisRequest, SweepKernelArgs } from '../../protocol';

async function activeAnalysis(client: LanguageClient) {
  const uri = vscode.window.activeTextEditor?.document.uri.toString();
  if (!uri) return null;
  const analysis = await client.sendRequest(FileAnalysisRequest, { uri });
  return analysis ? { uri, analysis } : null;
}

/** The innermost loop under the cursor, else one the user picks. */
export async function pickLoop(client: LanguageClient): Promise<BenchmarkLoopArgs | undefined> {
  const a = await activeAnalysis(client);
  if (!a) {
    void vscode.window.showWarningMessage('Unroll Lens: open a CUDA file and put the cursor on a loop.');
    return undefined;
  }
  const cursor = (vscode.window.activeTextEditor?.selection.active.line ?? -1) + 1;
  const loops = a.analysis.kernels.flatMap(k => k.loops.map(l => ({ k, l })));
  const under = loops.filter(({ l }) => cursor >= l.startLine && cursor <= l.endLine).sort((x, y) => y.l.depth - x.l.depth)[0];
  if (under) return { uri: a.uri, line: under.l.line, kernel: under.k.name };
  const pick = await vscode.window.showQuickPick(
    loops.map(({ k, l }) => ({ label: `line ${l.line}`, description: `${k.name} · ${l.summary}`, k, l })),
  );
  return pick ? { uri: a.uri, line: pick.l.line, kernel: pick.k.name } : undefined;
}

/** A `__global__` kernel of the active file, picked by the user. */
export async function pickKernel(client: LanguageClient): Promise<SweepKernelArgs | undefined> {
  const a = await activeAnalysis(client);
  if (!a) {
    void vscode.window.showWarningMessage('Unroll Lens: open a CUDA file first.');
    return undefined;
  }
  const kernels = a.analysis.kernels.filter(k => k.qualifier === 'global');
  const pick = await vscode.window.showQuickPick(
    kernels.map(k => ({ label: k.name, description: `line ${k.line}`, k })),
    { placeHolder: 'Kernel to sweep' },
  );
  return pick ? { uri: a.uri, line: pick.k.line, kernel: pick.k.name } : undefined;
}
