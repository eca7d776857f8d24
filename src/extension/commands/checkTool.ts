// "Check CUDA tools…" (the Get Started walkthrough's buttons): the server looks for the tools
// again (they may have been installed since) and answers each check, found where and which
// version, or what is missing and how to fix it; this shows it, logs it and returns the result
// (the check's for one id, every check's without). The client runs no program itself, and in an
// untrusted workspace the server runs none either: the answer then says how to trust it.
import * as vscode from 'vscode';
import { TOOL_CHECKS, ToolCheckId, ToolCheckResult } from '../../protocol';
import type { CommandFactory } from './context';

const TITLES: Record<ToolCheckId, string> = {
  nvcc: 'nvcc',
  disassemblers: 'cuobjdump and nvdisasm',
  ncu: 'Nsight Compute (ncu)',
  gpu: 'GPU and counter permission',
};

/** One check in one line: "nvcc: nvcc 13.0 at /usr/local/cuda/bin/nvcc (PATH)" or what is missing, then the fix. */
function checkLine(c: ToolCheckResult): string {
  return `${TITLES[c.id]}: ${c.message}${c.fix ? `. Fix: ${c.fix}` : ''}`;
}

/** The message for a check, with a button where one helps: trust the workspace, or the tool path settings. */
function report(c: ToolCheckResult, trusted: boolean): void {
  const text = `Unroll Lens: ${checkLine(c)}`;
  const button = !trusted ? 'Manage Workspace Trust' : !c.found && c.id !== 'gpu' ? 'Open Tool Settings' : undefined;
  const buttons = button ? [button] : [];
  const shown =
    c.severity === 'error'
      ? vscode.window.showErrorMessage(text, ...buttons)
      : c.severity === 'warning'
        ? vscode.window.showWarningMessage(text, ...buttons)
        : vscode.window.showInformationMessage(text, ...buttons);
  void shown.then(choice => {
    if (choice === 'Manage Workspace Trust') void vscode.commands.executeCommand('workbench.trust.manage');
    if (choice === 'Open Tool Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'unrollLens.toolchain');
  });
}

function checkId(arg: unknown): ToolCheckId | null | undefined {
  const id = typeof arg === 'string' ? arg : typeof arg === 'object' && arg !== null ? (arg as { tool?: unknown }).tool : undefined;
  if (id === undefined) return undefined;
  return (TOOL_CHECKS as readonly unknown[]).includes(id) ? (id as ToolCheckId) : null;
}

export const checkTool: CommandFactory =
  ({ toolchain, output }) =>
  async (arg?: ToolCheckId | { tool: ToolCheckId }) => {
    const id = checkId(arg);
    if (id === null) {
      const error = `unknown check ${JSON.stringify(arg)}: one of ${TOOL_CHECKS.join(', ')}`;
      void vscode.window.showErrorMessage(`Unroll Lens: ${error}`);
      return { error };
    }
    try {
      const info = await toolchain.refresh(true);
      const checks = id ? info.checks.filter(c => c.id === id) : info.checks;
      for (const c of checks) output.appendLine(`check ${c.id} (${c.severity}): ${checkLine(c)}`);
      if (id) report(checks[0], info.trusted);
      else {
        const worst = info.checks.find(c => c.severity === 'error') ?? info.checks.find(c => c.severity === 'warning');
        if (worst) report(worst, info.trusted);
        else void vscode.window.showInformationMessage(`Unroll Lens: ${info.text} (${info.detail})`);
      }
      return id ? checks[0] : info;
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      output.appendLine(`check failed: ${error}`);
      void vscode.window.showErrorMessage(`Unroll Lens: the check failed: ${error}`);
      return { error };
    }
  };
