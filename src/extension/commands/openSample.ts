// "Open the sample kernel" (the walkthrough's first benchmark): the sample ships in the extension's
// own folder (walkthrough/sample/); it is copied into the extension's global storage, once, and
// opened there, so the benchmark's Apply edits our copy and never the user's workspace. Returns
// the opened file's URI.
import * as vscode from 'vscode';
import { WALKTHROUGH_SAMPLE } from '../../protocol';
import type { CommandFactory } from './context';

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

export const openSample: CommandFactory =
  ({ extension, output }) =>
  async () => {
    const shipped = vscode.Uri.joinPath(extension.uri, ...WALKTHROUGH_SAMPLE.split('/'));
    const copy = vscode.Uri.joinPath(extension.globalStorage, 'samples', WALKTHROUGH_SAMPLE.split('/').pop()!);
    try {
      // A copy that is there already may hold the user's edits (an applied pragma): kept.
      if (!(await exists(copy))) {
        await vscode.workspace.fs.createDirectory(vscode.Uri.joinPath(copy, '..'));
        await vscode.workspace.fs.copy(shipped, copy, { overwrite: false });
        output.appendLine(`sample copied to ${copy.fsPath}`);
      }
      const doc = await vscode.workspace.openTextDocument(copy);
      await vscode.window.showTextDocument(doc);
      return copy.toString();
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      void vscode.window.showErrorMessage(`Unroll Lens: cannot open the sample: ${error}`);
      return { error };
    }
  };
