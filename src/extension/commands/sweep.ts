// "Sweep unroll factors…" (palette, and the CodeLens above a kernel): asks for the loops (all by
// default), the factor set, optional macro axes and a strategy (a kernel without loops: only its
// template or macro values, which it then needs), then runs the sweep on the server
// with the results panel filling in live; the notification and the panel can both cancel it.
import * as vscode from 'vscode';
import {
  DEFAULT_SETTINGS,
  FileAnalysisRequest,
  SWEEP_STRATEGIES,
  SweepKernelArgs,
  SweepParams,
  SweepRequest,
  SweepRunResult,
  SweepUpdateNotification,
} from '../../protocol';
import { parseUnrollFactorText, UNROLL_FACTOR_EXPECTED, validFactorTexts } from '../../schema/ranges';
import { applyBestOffer } from '../../schema/applyBest';
import { pointsText } from '../../schema/sweepCounts';
import { requestWithProgress } from '../progress';
import type { CommandFactory } from './context';
import { StallDecorations } from '../stallDecorations';
import { pickKernel } from './pick';

/** How long a cancelled Slurm sweep's command waits for the server's word on the queue (its scancel waits up to 60 s). */
const SLURM_CANCEL_WAIT_MS = 90_000;

/** A cancelled Slurm sweep's word on the queue (the server waits until squeue lists none of its tasks), from its last update. */
async function slurmCancelNote(last: Promise<string[]>): Promise<string | null> {
  if (vscode.workspace.getConfiguration('unrollLens').get<boolean>('profile.slurm.enabled') !== true) return null;
  let timer: NodeJS.Timeout | undefined;
  const notes = await Promise.race([last, new Promise<string[]>(r => (timer = setTimeout(() => r([]), SLURM_CANCEL_WAIT_MS)))]);
  clearTimeout(timer);
  return notes.find(n => n.startsWith('Slurm: cancelled')) ?? null;
}

/** Everything a sweep needs; a caller (or a test) that passes it all is asked nothing. */
interface SweepCommandArgs extends SweepKernelArgs {
  loops?: number[];
  factors?: string[];
  params?: string[];
  strategy?: string;
  static?: boolean;
}

/** Points in the space: factors per loop, times every parameter's values. */
function spaceSize(loops: number, factors: number, params: string[]): number {
  return params.reduce((n, p) => n * Math.max(1, p.split('=')[1]?.split(',').filter(Boolean).length ?? 1), factors ** loops);
}

async function askLoops(loops: { line: number; summary: string; depth: number }[]): Promise<number[] | undefined> {
  if (loops.length <= 1) return loops.map(l => l.line);
  const items = loops.map(l => ({
    label: `line ${l.line}`,
    description: `${'  '.repeat(l.depth)}${l.summary}`,
    picked: true,
    line: l.line,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: 'Unroll Lens sweep: loops to vary (1/4)',
    placeHolder: 'Every combination of their factors is a point',
  });
  return picked?.length ? picked.map(p => p.line) : undefined;
}

async function askFactors(defaults: string[]): Promise<string[] | undefined> {
  const text = await vscode.window.showInputBox({
    title: 'Unroll Lens sweep: unroll factors (2/4)',
    value: defaults.join(','),
    prompt: `${UNROLL_FACTOR_EXPECTED}, comma-separated`,
    validateInput: v => {
      const parts = v.split(',').map(p => parseUnrollFactorText(p));
      const bad = parts.find(p => !('factor' in p));
      return bad && 'message' in bad ? `${bad.message} (e.g. default,1,2,4,8,16,full)` : null;
    },
  });
  return text
    ?.split(',')
    .map(s => s.trim())
    .filter(Boolean);
}

/** `loopless`: the kernel without loops whose values are all the sweep has (the axes are required, its template parameters offered). */
async function askParams(loopless: { name: string; templateParameters?: string[] } | null): Promise<string[] | undefined> {
  const tparams = loopless?.templateParameters ?? [];
  const text = await vscode.window.showInputBox({
    title: loopless
      ? `Unroll Lens sweep: ${loopless.name} has no loops, values to sweep (1/2)`
      : 'Unroll Lens sweep: extra axes (3/4, optional)',
    value: tparams.length ? `${tparams[0]}=` : '',
    prompt:
      'NAME=v1,v2: a template parameter of the kernel picks its instantiations (BODY=32,128; {BODY} in the program ' +
      'arguments gets the value), any other name is a macro passed as -D (BLOCK=8,16,32). Separate several with ";". ' +
      (loopless
        ? `At least one is needed${tparams.length ? `; template parameters: ${tparams.join(', ')}` : ''}.`
        : 'Leave empty for none.'),
    validateInput: v =>
      v.split(';').every(p => !p.trim() || /^\s*[A-Za-z_]\w*\s*=\s*[A-Za-z0-9_.+-]+(\s*,\s*[A-Za-z0-9_.+-]+)*\s*$/.test(p))
        ? null
        : 'NAME=v1,v2 with letters, digits, _ . + - only',
  });
  return text === undefined
    ? undefined
    : text
        .split(';')
        .map(s => s.replace(/\s+/g, ''))
        .filter(Boolean);
}

async function askStrategy(size: number, step = '4/4'): Promise<string | undefined> {
  const items = SWEEP_STRATEGIES.map(s => ({
    label: s.name,
    description: s.name === 'exhaustive' ? `${size} points` : 'fewer evaluations',
    detail: s.description,
  }));
  if (size > 64) items.reverse(); // large spaces: the search first
  const picked = await vscode.window.showQuickPick(items, { title: `Unroll Lens sweep: strategy (${step})` });
  return picked?.label;
}

/**
 * The space: loops, factors, extra axes and strategy, asked for unless `args` gives them. Without
 * loops only template or macro values can vary: the loop and factor questions are skipped and
 * the values are required. Undefined when the user cancels (or gives no values for a loop-less kernel).
 */
async function askSpace(
  args: SweepCommandArgs | undefined,
  kernel: { name: string; loops: { line: number; summary: string; depth: number }[]; templateParameters?: string[] },
  log: (m: string) => void,
): Promise<{ loops: number[]; factors: string[]; params: string[]; strategy: string; size: number; loopless: boolean } | undefined> {
  const loopless = !kernel.loops.length;
  // The setting as the user wrote it: invalid entries (1e23, -4) are dropped and logged, never built.
  const configured = validFactorTexts(vscode.workspace.getConfiguration('unrollLens').get<unknown>('unrollFactors'), log);
  const defaults = configured.length ? configured : [...DEFAULT_SETTINGS.unrollFactors];
  const loops = loopless ? [] : (args?.loops ?? (await askLoops(kernel.loops)));
  if (!loops) return undefined;
  const factors = loopless ? [] : (args?.factors ?? (await askFactors(defaults)));
  if (!factors) return undefined;
  const params = args?.params ?? (args?.factors && !loopless ? [] : await askParams(loopless ? kernel : null));
  if (!params) return undefined;
  if (loopless && !params.length) {
    const names = kernel.templateParameters?.length ? ` (template parameters: ${kernel.templateParameters.join(', ')})` : '';
    void vscode.window.showInformationMessage(
      `Unroll Lens: ${kernel.name} has no loops; give NAME=v1,v2 to sweep its template or macro values${names}.`,
    );
    return undefined;
  }
  const size = spaceSize(loops.length, factors.length, params);
  const strategy = args?.strategy ?? (args?.factors ? 'exhaustive' : await askStrategy(size, loopless ? '2/2' : '4/4'));
  return strategy ? { loops, factors, params, strategy, size, loopless } : undefined;
}

export const sweepKernel: CommandFactory = ({ client, output, panels, subscriptions }) => {
  const live = new Map<
    string,
    (u: { result: SweepRunResult['result']; progress: { message: string; done: number; total: number; atMost?: boolean } | null }) => void
  >();
  subscriptions.push(client.onNotification(SweepUpdateNotification, u => live.get(u.runId)?.(u)));
  // Per-line stall notes of the file as written, as "Benchmark this loop" shows them.
  const decorations = new StallDecorations();
  subscriptions.push(decorations);
  return async (args?: SweepCommandArgs) => {
    const target = args ?? (await pickKernel(client));
    if (!target) return undefined;
    const outline = await client.sendRequest(FileAnalysisRequest, { uri: target.uri });
    const kernel = outline?.kernels.find(k => k.line === target.line);
    if (!kernel) {
      void vscode.window.showWarningMessage(`Unroll Lens: ${target.kernel} is not in the open file any more.`);
      return undefined;
    }
    const space = await askSpace(args, kernel, m => output.appendLine(m));
    if (!space) return undefined;
    const { loops, factors, params, strategy, size, loopless } = space;

    const runId = `sweep-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const fromPanel = new vscode.CancellationTokenSource();
    let panel: ReturnType<typeof panels.open> | null = null;
    // the server's last update (progress null) carries the result as it ended: a cancelled Slurm sweep's note on the queue
    let ended!: (notes: string[]) => void;
    const last = new Promise<string[]>(r => (ended = r));
    live.set(runId, u => {
      panel = panels.open(u.result, u.progress);
      panel.onCancel = () => fromPanel.cancel();
      if (!u.progress) ended(u.result.notes);
    });
    const params_: SweepParams = {
      uri: target.uri,
      kernelLine: kernel.line,
      loops,
      factors,
      params,
      strategy,
      static: args?.static,
      runId,
    };
    output.appendLine(
      `sweep ${kernel.name}: ${loopless ? params.join(' × ') : `loops ${loops.join(', ')} × factors ${factors.join(',')}${params.length ? ` × ${params.join(' × ')}` : ''}`} (${strategy}, ${size} points)`,
    );
    try {
      const outcome = await requestWithProgress(client, `Unroll Lens: sweeping ${kernel.name}`, SweepRequest, params_, fromPanel.token);
      if (outcome.cancelled) {
        const slurm = await slurmCancelNote(last);
        if (slurm) output.appendLine(`sweep ${kernel.name}: ${slurm}`);
        void vscode.window.showInformationMessage(
          `Unroll Lens: sweep cancelled${slurm ? ` (${slurm.replace(/^Slurm: cancelled[;,]? ?/, 'Slurm: ')})` : ''}; the panel shows what finished.`,
        );
        return undefined;
      }
      const { result, savedPath, lineStalls } = outcome.result;
      panel = panels.open(result, null);
      decorations.show(target.uri, lineStalls ?? []);
      (panel as ReturnType<typeof panels.open>).onCancel = null;
      const best = result.variants.find(v => v.id === result.best);
      output.appendLine(
        `sweep ${kernel.name}: ${pointsText(result)}, best ${best?.label ?? 'none'}${savedPath ? `; saved ${savedPath}` : ''}`,
      );
      for (const n of result.notes) output.appendLine(`  note: ${n}`);
      const speed =
        best?.speedup != null && !result.static
          ? ` (${best.speedup.toFixed(2)}× vs as written)`
          : result.static
            ? ' (static rule: no GPU run)'
            : '';
      // Apply best only when the best is distinguishable from the file as written (issue 25)
      const { offer, why } = applyBestOffer(result);
      if (why) output.appendLine(`  ${offer ? 'apply best' : 'no change offered'}: ${why}`);
      void vscode.window
        .showInformationMessage(
          `Unroll Lens: ${kernel.name}: best ${best?.label ?? 'none'}${speed} after ${pointsText(result)}${why && !offer ? `; ${why}` : ''}.`,
          ...(best && offer ? ['Apply best'] : []),
        )
        .then(choice => (choice && best && offer ? panels.apply(result, best, true) : undefined));
      return outcome.result;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      output.appendLine(`sweep failed: ${msg}`);
      void vscode.window.showErrorMessage(`Unroll Lens: ${msg}`);
      return { error: msg };
    } finally {
      live.delete(runId);
      fromPanel.dispose();
    }
  };
};
