// "Show SASS of This Line" (source → SASS): the listing of the kernel around the cursor (an open
// one that has the line, else the file as written, built for the loop under the cursor or the
// kernel's first loop), with the SASS lines of the cursor's source line selected and revealed.
import * as vscode from 'vscode';
import { FileAnalysisRequest, SASS_SCHEME } from '../../protocol';
import { SassDocuments } from '../sassDocuments';
import type { CommandFactory } from './context';

export const showSassForLine: CommandFactory =
  ({ client, sass }) =>
  async (args?: { uri: string; line: number }) => {
    const editor = vscode.window.activeTextEditor;
    const uri = args?.uri ?? editor?.document.uri.toString();
    const line = args?.line ?? (editor ? editor.selection.active.line + 1 : 0);
    if (!uri || !line || vscode.Uri.parse(uri).scheme === SASS_SCHEME) {
      void vscode.window.showWarningMessage('Unroll Lens: put the cursor on a line of a CUDA kernel first.');
      return undefined;
    }
    const key = vscode.Uri.parse(uri).toString();
    let listing = vscode.window.visibleTextEditors.find(
      e =>
        e.document.uri.scheme === SASS_SCHEME &&
        vscode.Uri.parse(SassDocuments.targetOf(e.document.uri).uri).toString() === key &&
        sass.rangesOf(e.document.uri, line).length > 0,
    );
    if (!listing) {
      const analysis = await client.sendRequest(FileAnalysisRequest, { uri });
      const kernels = (analysis?.kernels ?? []).filter(k => k.line <= line).sort((a, b) => b.line - a.line);
      const loops = kernels.flatMap(k => k.loops);
      const under = loops.filter(l => line >= l.startLine && line <= l.endLine).sort((a, b) => b.depth - a.depth)[0];
      // Not in a loop: the nearest kernel above the cursor that has one (the listing is the whole kernel).
      const loop = under ?? kernels.find(k => k.loops.length)?.loops[0];
      if (!loop) {
        void vscode.window.showWarningMessage(`Unroll Lens: line ${line} is not in a kernel with a loop Unroll Lens can build.`);
        return undefined;
      }
      listing = await sass.open({ uri, line: loop.line }, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false });
      if (!listing) return undefined;
    } else listing = await vscode.window.showTextDocument(listing.document, { viewColumn: listing.viewColumn });
    const ranges = sass.rangesOf(listing.document.uri, line);
    if (!ranges.length) {
      void vscode.window.showInformationMessage(
        `Unroll Lens: source line ${line} has no instructions in this listing (not code, or nvcc merged it into other lines).`,
      );
      return { listing: listing.document.uri.toString(), ranges };
    }
    listing.selections = ranges.map(r => new vscode.Selection(r.from, 0, r.to, listing.document.lineAt(r.to).text.length));
    listing.revealRange(new vscode.Range(ranges[0].from, 0, ranges[0].to, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return { listing: listing.document.uri.toString(), ranges };
  };
