// "Compare kernels in this file" (palette, and the CodeLens above a program's first kernel; issue
// 26): asks for the kernels (those the file launches preselected), the baseline and the program
// arguments, then the server times the kernels side by side from the same program runs and the
// results panel shows the ladder. Cancelling the notification stops the runs.
import * as vscode from 'vscode';
import { CompareKernelsArgs, CompareKernelsRequest, FileAnalysisRequest } from '../../protocol';
import { requestWithProgress } from '../progress';
import type { CommandFactory } from './context';

/** A word as a POSIX shell would read it back (the server splits the line the same way, without a shell). */
function shellWord(w: string): string {
  return w !== '' && /^[A-Za-z0-9_@%+=:,./{}-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** unrollLens.profile.args (one element per argument) as the line the prompt starts with. */
function argsLine(args: unknown): string {
  return Array.isArray(args)
    ? args
        .filter((a): a is string => typeof a === 'string')
        .map(shellWord)
        .join(' ')
    : '';
}

/** The kernels the file launches are preselected (all of them when it launches none we can see). */
async function askKernels(names: string[], launched: Set<string>): Promise<string[] | undefined> {
  const some = names.some(n => launched.has(n));
  const picked = await vscode.window.showQuickPick(
    names.map(name => ({
      label: name,
      picked: !some || launched.has(name),
      description: some && !launched.has(name) ? 'not launched in this file' : undefined,
    })),
    {
      canPickMany: true,
      title: 'Unroll Lens compare: kernels to time (1/3)',
      placeHolder: 'Every instantiation of each is a row; all run in the same program runs',
    },
  );
  return picked?.length ? picked.map(p => p.label) : undefined;
}

async function askBaseline(kernels: string[]): Promise<string | undefined> {
  if (kernels.length === 1) return kernels[0];
  const picked = await vscode.window.showQuickPick(
    kernels.map((name, i) => ({ label: name, description: i === 0 ? 'first picked' : undefined })),
    { title: 'Unroll Lens compare: baseline (2/3)', placeHolder: 'Speedups are this kernel’s median / each kernel’s median' },
  );
  return picked?.label;
}

async function askArgs(): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title: 'Unroll Lens compare: program arguments (3/3)',
    value: argsLine(vscode.workspace.getConfiguration('unrollLens').get<unknown>('profile.args')),
    prompt:
      'Arguments of the program, split like a shell would (quotes work) but never run through one. ' +
      'It must exit 0 and print no MISMATCH line. Default: unrollLens.profile.args.',
  });
}

/** The kernels, baseline and arguments: from `args` where it gives them, else asked; undefined when the user cancels. */
async function askComparison(
  args: CompareKernelsArgs,
  written: string[],
  launched: Set<string>,
): Promise<{ kernels: string[]; baseline: string; args: string } | undefined> {
  const kernels = args.kernels ?? (await askKernels(written, launched));
  if (!kernels?.length) return undefined;
  const baseline = args.baseline ?? (await askBaseline(kernels));
  if (baseline === undefined) return undefined;
  const line = args.args ?? (await askArgs());
  return line === undefined ? undefined : { kernels, baseline, args: line };
}

export const compareKernels: CommandFactory = ({ client, output, panels }) => {
  return async (given?: CompareKernelsArgs) => {
    const uri = given?.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    const outline = uri ? await client.sendRequest(FileAnalysisRequest, { uri }) : null;
    if (!uri || !outline) {
      void vscode.window.showWarningMessage('Unroll Lens: open a CUDA file with kernels and a main() first.');
      return undefined;
    }
    // each kernel once, in the order written (an overloaded name is one kernel to `compare`)
    const written = [...new Set(outline.kernels.filter(k => k.qualifier === 'global').map(k => k.name))];
    if (!written.length) {
      void vscode.window.showInformationMessage('Unroll Lens: this file has no __global__ kernels to compare.');
      return undefined;
    }
    const asked = await askComparison(given ?? { uri }, written, new Set(outline.launched ?? []));
    if (!asked) return undefined;
    output.appendLine(`compare ${asked.kernels.join(', ')} (baseline ${asked.baseline})${asked.args ? ` args: ${asked.args}` : ''}`);
    try {
      const outcome = await requestWithProgress(
        client,
        `Unroll Lens: comparing ${asked.kernels.length} kernel${asked.kernels.length === 1 ? '' : 's'} on the GPU`,
        CompareKernelsRequest,
        { uri, ...asked },
      );
      if (outcome.cancelled) {
        void vscode.window.showInformationMessage('Unroll Lens: comparison cancelled; nothing was left running.');
        return undefined;
      }
      const report = outcome.result;
      panels.open(report.result);
      const run = report.result.variants[0];
      for (const k of report.kernels)
        output.appendLine(
          `compare ${k.label}: ${k.medianMs !== null ? `median ${k.medianMs.toFixed(4)} ms speedup ${k.speedup?.toFixed(2) ?? '-'}${k.withinNoise && k.label !== report.baseline ? ' (noise)' : ''}` : 'no time'}`,
        );
      if (run?.message) output.appendLine(`compare: ${run.status}: ${run.message}`);
      const timed = report.kernels.filter(k => k.medianMs !== null);
      const fastest = timed.reduce<(typeof timed)[number] | null>((a, k) => (a === null || k.medianMs! < a.medianMs! ? k : a), null);
      const verdict = fastest
        ? `fastest: ${fastest.label}${report.baseline && fastest.speedup !== null ? ` (${fastest.speedup.toFixed(2)}× vs ${report.baseline})` : ''}`
        : `no kernel was timed${run?.message ? `: ${run.message}` : ''}`;
      const missing = report.kernels.length - timed.length;
      void vscode.window.showInformationMessage(
        `Unroll Lens: ${verdict}${missing && timed.length ? `; ${missing} without time` : ''}. The panel shows the ladder${report.savedPath ? '; saved under .unroll-lens/results' : ''}.`,
      );
      return report;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      output.appendLine(`compare failed: ${msg}`);
      void vscode.window.showErrorMessage(`Unroll Lens: ${msg}`);
      return { error: msg };
    }
  };
};
