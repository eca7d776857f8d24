// "Sweep unroll factors" (CodeLens above a kernel): not implemented yet; it answers so.
import * as vscode from 'vscode';
import type { SweepKernelArgs } from '../../protocol';
import type { CommandFactory } from './context';
import { pickKernel } from './pick';

export const sweepKernel: CommandFactory = ({ client, output }) => async (args?: SweepKernelArgs) => {
  const target = args ?? (await pickKernel(client));
  if (!target) return undefined;
  const msg = `Sweep of unroll factors for ${target.kernel}: not available yet (comes with variant builds in a later release).`;
  output.appendLine(msg);
  void vscode.window.showInformationMessage(`Unroll Lens: ${msg}`);
  return { status: 'not-available', ...target };
};
