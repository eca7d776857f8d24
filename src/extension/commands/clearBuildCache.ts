// "Clear Build Cache": deletes the variant builds the language server cached in the extension's
// global storage (<globalStorageUri>/builds, as the client tells the server at start), after a
// modal confirmation. Entries are moved aside before deletion, so a build being read is not lost
// under its reader (see engine/variants/cache.ts).
import * as path from 'path';
import * as vscode from 'vscode';
import { BuildCache, formatBytes } from '../../engine/variants/cache';
import type { CommandFactory } from './context';

export const clearBuildCache: CommandFactory =
  ({ client, output }) =>
  async () => {
    const storage = (client.clientOptions.initializationOptions as { storagePath?: string } | undefined)?.storagePath;
    if (!storage) {
      void vscode.window.showErrorMessage('Unroll Lens: no global storage folder, so there is no build cache to clear.');
      return;
    }
    const cache = new BuildCache(path.join(storage, 'builds'));
    const info = cache.info();
    if (!info.entries) {
      void vscode.window.showInformationMessage(`Unroll Lens: the build cache is empty (${info.location}).`);
      return;
    }
    const choice = await vscode.window.showWarningMessage(
      `Delete ${info.entries} cached builds (${formatBytes(info.bytes)})?`,
      { modal: true, detail: `${info.location}\nThey are rebuilt with nvcc when next needed.` },
      'Clear Cache',
    );
    if (choice !== 'Clear Cache') return;
    cache.clear();
    const left = cache.info().entries;
    output.appendLine(
      `build cache ${info.location}: cleared ${info.entries} entries (${formatBytes(info.bytes)})${left ? `, ${left} left` : ''}`,
    );
    void vscode.window.showInformationMessage(
      `Unroll Lens: cleared the build cache (${info.entries} builds, ${formatBytes(info.bytes)})${left ? `; ${left} could not be deleted` : ''}.`,
    );
  };
