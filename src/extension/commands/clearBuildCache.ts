// "Clear Build Cache": deletes the variant builds the language server cached in the extension's
// global storage (<globalStorageUri>/builds, as the client tells the server at start) and the
// GPU measurements beside them (<globalStorageUri>/measurements), after a modal confirmation. The
// server counts and clears them (server/buildCache.ts, ClearCacheRequest); this only asks and shows.
import * as vscode from 'vscode';
import { ClearCacheRequest } from '../../protocol';
import type { CommandFactory } from './context';

export const clearBuildCache: CommandFactory =
  ({ client, output }) =>
  async () => {
    const info = await client.sendRequest(ClearCacheRequest, { clear: false });
    if (info.status === 'no-storage') {
      void vscode.window.showErrorMessage('Unroll Lens: no global storage folder, so there is no build cache to clear.');
      return;
    }
    if (info.status !== 'counted') return;
    if (!info.builds && !info.measurements) {
      void vscode.window.showInformationMessage(`Unroll Lens: the build cache is empty (${info.location}).`);
      return;
    }
    const choice = await vscode.window.showWarningMessage(
      `Delete ${info.builds} cached builds (${info.size})${info.measurements ? ` and ${info.measurements} GPU measurements` : ''}?`,
      {
        modal: true,
        detail: `${info.location}\nThey are rebuilt with nvcc (and measured on the GPU again) when next needed.`,
      },
      'Clear Cache',
    );
    if (choice !== 'Clear Cache') return;
    const gone = await client.sendRequest(ClearCacheRequest, { clear: true });
    if (gone.status === 'refused') {
      // Not a folder of ours (no marker): nothing in it was deleted.
      void vscode.window.showErrorMessage(`Unroll Lens: ${gone.reason}`);
      return;
    }
    if (gone.status !== 'cleared') return;
    output.appendLine(
      `build cache ${gone.location}: cleared ${gone.builds} entries (${gone.size})${gone.left ? `, ${gone.left} left` : ''}; ${gone.measurements} measurements`,
    );
    void vscode.window.showInformationMessage(
      `Unroll Lens: cleared the build cache (${gone.builds} builds, ${gone.size})${gone.left ? `; ${gone.left} could not be deleted` : ''}.`,
    );
  };
