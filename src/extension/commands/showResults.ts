// "Open a saved result…": the sweeps and benchmarks saved under the workspace's
// .unroll-lens/results/, newest first; the picked one opens in the results panel.
import * as path from 'path';
import * as vscode from 'vscode';
import { ListResultsRequest, LoadResultRequest } from '../../protocol';
import type { ListResultsResult } from '../../protocol';

type SavedResultSummary = ListResultsResult['results'][number];
import type { CommandFactory } from './context';

const ORIGIN_LABEL: Record<SavedResultSummary['origin'], string> = {
  sweep: 'sweep',
  bench: 'benchmark',
  variants: 'SASS variants',
  compare: 'kernel comparison',
};

export const showResults: CommandFactory =
  ({ client, output, panels }) =>
  async (args?: { path: string }) => {
    try {
      let file = args?.path;
      if (!file) {
        const { results, skipped } = await client.sendRequest(ListResultsRequest, {});
        for (const s of skipped) output.appendLine(`results: skipped ${s.path}: ${s.reason}`);
        if (!results.length) {
          void vscode.window.showInformationMessage(
            'Unroll Lens: no saved results yet. Run a sweep or a benchmark; finished ones are saved under .unroll-lens/results/.',
          );
          return undefined;
        }
        const items = results.map(r => ({
          label: `${r.origin === 'compare' ? path.basename(r.file) : r.kernel} · ${ORIGIN_LABEL[r.origin]}${r.static ? ' (static)' : ''}`,
          description: `${path.basename(r.file)} · ${new Date(r.createdAt).toLocaleString()}`,
          detail: r.origin === 'compare' ? 'kernels of one program timed side by side' : r.best ? `best: ${r.best}` : 'no finished variant',
          path: r.path,
        }));
        file = (
          await vscode.window.showQuickPick(items, { placeHolder: 'Saved Unroll Lens results, newest first', matchOnDescription: true })
        )?.path;
        if (!file) return undefined;
      }
      const result = await client.sendRequest(LoadResultRequest, { path: file });
      panels.open(result);
      return result;
    } catch (e) {
      void vscode.window.showErrorMessage(`Unroll Lens: ${e instanceof Error ? e.message : e}`);
      return undefined;
    }
  };
