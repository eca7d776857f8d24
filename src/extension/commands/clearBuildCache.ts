// "Clear Build Cache": deletes the variant builds the language server cached in the extension's
// global storage (<globalStorageUri>/builds, as the client tells the server at start) and the
// GPU measurements beside them (<globalStorageUri>/measurements), after a modal confirmation. Entries are moved aside before deletion, so a build being read is not lost
// under its reader (see engine/variants/cache.ts).
import * as path from 'path';
import * as vscode from 'vscode';
import { MeasurementCache } from '../../engine/profile/measurementCache';
import { BuildCache, formatBytes } from '../../engine/variants/cache';
import { NotOurCacheError } from '../../engine/variants/cacheFolder';
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
    const measurements = new MeasurementCache(path.join(storage, 'measurements'));
    const info = cache.info();
    const measured = measurements.info().entries;
    if (!info.entries && !measured) {
      void vscode.window.showInformationMessage(`Unroll Lens: the build cache is empty (${info.location}).`);
      return;
    }
    const choice = await vscode.window.showWarningMessage(
      `Delete ${info.entries} cached builds (${formatBytes(info.bytes)})${measured ? ` and ${measured} GPU measurements` : ''}?`,
      {
        modal: true,
        detail: `${info.location}\nThey are rebuilt with nvcc (and measured on the GPU again) when next needed.`,
      },
      'Clear Cache',
    );
    if (choice !== 'Clear Cache') return;
    try {
      cache.clear();
      measurements.clear();
    } catch (e) {
      // Not a folder of ours (no marker): nothing in it is deleted.
      if (!(e instanceof NotOurCacheError)) throw e;
      void vscode.window.showErrorMessage(`Unroll Lens: ${e.message}`);
      return;
    }
    const left = cache.info().entries;
    output.appendLine(
      `build cache ${info.location}: cleared ${info.entries} entries (${formatBytes(info.bytes)})${left ? `, ${left} left` : ''}; ${measured} measurements`,
    );
    void vscode.window.showInformationMessage(
      `Unroll Lens: cleared the build cache (${info.entries} builds, ${formatBytes(info.bytes)})${left ? `; ${left} could not be deleted` : ''}.`,
    );
  };
