// "Show loops in this file": a quick pick of the device loops the server found; picking one
// reveals it. The CodeLens summary under each loop runs it too.
import * as vscode from 'vscode';
import { FileAnalysisRequest } from '../../protocol';
import type { CommandFactory } from './context';

export const showLoops: CommandFactory =
  ({ client }) =>
  async (args?: { uri: string; line: number }) => {
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
    const items = analysis.kernels.flatMap(k =>
      k.loops.map(l => ({
        label: `$(symbol-event) ${l.kind} · line ${l.line}`,
        description: `${k.name} · ${l.summary}`,
        line: l.line,
      })),
    );
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
  };
