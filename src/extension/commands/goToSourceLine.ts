// "Go to Source Line" (SASS listing → source): the source line of the SASS line under the cursor.
// F12 does the same through the listing's DefinitionProvider.
import * as vscode from 'vscode';
import { SASS_SCHEME } from '../../protocol';
import type { CommandFactory } from './context';

export const goToSourceLine: CommandFactory =
  ({ sass }) =>
  async () => {
    const editor = vscode.window.activeTextEditor;
    if (editor?.document.uri.scheme !== SASS_SCHEME) {
      void vscode.window.showWarningMessage('Unroll Lens: put the cursor in a SASS listing first.');
      return undefined;
    }
    const source = sass.sourceOf(editor.document.uri, editor.selection.active.line);
    if (!source) {
      void vscode.window.showInformationMessage(
        'Unroll Lens: this listing line has no source line (a header, a label or code without line info).',
      );
      return undefined;
    }
    const pos = new vscode.Position(source.line - 1, 0);
    // The source beside the listing when it is not already visible elsewhere.
    const visible = vscode.window.visibleTextEditors.find(e => e.document.uri.toString() === source.uri.toString());
    const shown = await vscode.window.showTextDocument(source.uri, {
      viewColumn: visible?.viewColumn ?? vscode.ViewColumn.Beside,
      selection: new vscode.Range(pos, pos),
    });
    shown.revealRange(shown.document.lineAt(pos.line).range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return { uri: source.uri.toString(), line: source.line };
  };
