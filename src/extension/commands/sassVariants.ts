// "Build unroll variants (SASS) for this loop": the server builds every unroll factor from the
// editor's current text (shadow copies; the file is never saved or touched). Progress shows in
// a cancellable notification; the table lands in the loop's hover and CodeLens.
import * as vscode from 'vscode';
import { LoopVariantsRequest } from '../../protocol';
import { requestWithProgress } from '../progress';
import type { CommandFactory } from './context';
import { pickLoop } from './pick';

export const sassVariants: CommandFactory =
  ({ client, output, panels }) =>
  async (args?: { uri: string; line: number }) => {
    const target = args ?? (await pickLoop(client));
    if (!target) return undefined;
    try {
      const outcome = await requestWithProgress(client, `Unroll Lens: unroll variants of line ${target.line}`, LoopVariantsRequest, {
        uri: target.uri,
        line: target.line,
      });
      if (outcome.cancelled) {
        void vscode.window.showInformationMessage('Unroll Lens: variant build cancelled.');
        return undefined;
      }
      const report = outcome.result;
      panels.open(report.result);
      const ok = report.variants.filter(v => v.status === 'ok').length;
      const built = report.variants.map(
        v => `${v.factor}=${v.status === 'ok' ? `${v.kernelInstructions} instr ×${v.effectiveUnroll ?? '?'}` : v.status}`,
      );
      output.appendLine(`variants of line ${target.line}: ${built.join(', ')}`);
      for (const n of report.notes) output.appendLine(`  note: ${n}`);
      const note = report.notes.length ? ` ${report.notes[0]}.` : '';
      void vscode.window.showInformationMessage(
        `Unroll Lens: ${ok}/${report.variants.length} variants built for line ${target.line}. The panel and the loop's hover show the table.${note}`,
      );
      return report;
    } catch (e) {
      void vscode.window.showErrorMessage(`Unroll Lens: ${e instanceof Error ? e.message : e}`);
      return undefined;
    }
  };
