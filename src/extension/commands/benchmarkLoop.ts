// "Benchmark this loop": the server builds, checks, times and profiles every unroll factor of the
// loop on the GPU (ncu). This shows progress, a one-line verdict, the per-variant log and the
// per-line warp-stall notes inline.
import * as vscode from 'vscode';
import { icacheShownText } from '../../schema/icacheText';
import { applyBestOffer } from '../../schema/applyBest';
import { BenchLoopRequest, BenchmarkLoopArgs } from '../../protocol';
import { requestWithProgress } from '../progress';
import { StallDecorations } from '../stallDecorations';
import type { CommandFactory } from './context';
import { pickLoop } from './pick';

export const benchmarkLoop: CommandFactory = ({ client, output, panels, subscriptions }) => {
  const decorations = new StallDecorations();
  subscriptions.push(decorations);
  return async (args?: BenchmarkLoopArgs) => {
    const target = args ?? (await pickLoop(client));
    if (!target) return undefined;
    try {
      const outcome = await requestWithProgress(client, `Unroll Lens: benchmarking line ${target.line} on the GPU`, BenchLoopRequest, {
        uri: target.uri,
        line: target.line,
      });
      if (outcome.cancelled) {
        void vscode.window.showInformationMessage('Unroll Lens: benchmark cancelled; nothing was left running.');
        return undefined;
      }
      const report = outcome.result;
      panels.open(report.result);
      decorations.show(target.uri, report.lineStalls);
      for (const v of report.variants) {
        const timing =
          v.medianMs !== null
            ? ` median ${v.medianMs.toFixed(4)} ms IQR ${v.iqrMs?.toFixed(4)} speedup ${v.speedup?.toFixed(2)}${v.withinNoise ? ' (noise)' : ''}`
            : '';
        const icache = v.icache ? ` i-cache ${icacheShownText(v.icache)}` : '';
        output.appendLine(
          `bench ${target.kernel}:${target.line} ${v.label}: ${v.status}${timing}${icache}${v.message ? ` — ${v.message}` : ''}`,
        );
      }
      const best = report.variants.find(v => v.label === report.fastest);
      const failed = report.variants.filter(v => v.status !== 'ok');
      const verdict = best
        ? `fastest: ${best.label} (${best.speedup?.toFixed(2)}× vs as written${best.withinNoise && best.label !== report.baseline ? ', within noise' : ''})`
        : 'no variant ran';
      const failures = failed.length ? `; ${failed.length} failed (${failed.map(v => `${v.label}: ${v.status}`).join(', ')})` : '';
      // whether the panel offers Apply best, and why (issue 25)
      const { offer, why } = applyBestOffer(report.result);
      if (why) output.appendLine(`bench ${target.kernel}:${target.line}: ${offer ? 'apply best' : 'no change offered'}: ${why}`);
      void vscode.window.showInformationMessage(
        `Unroll Lens: ${verdict}${failures}${why && !offer ? `; ${why}` : ''}. The panel and the loop's hover show the table${report.savedPath ? '; saved under .unroll-lens/results' : ''}.`,
      );
      return report;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      output.appendLine(`bench failed: ${msg}`);
      void vscode.window.showErrorMessage(`Unroll Lens: ${msg}`);
      return { error: msg };
    }
  };
};
