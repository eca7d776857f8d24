// "Get Started": opens the walkthrough (package.json contributes.walkthroughs), also the language
// status item's link.
import * as vscode from 'vscode';
import { WALKTHROUGH_ID } from '../../protocol';
import type { CommandFactory } from './context';

export const openWalkthrough: CommandFactory =
  ({ extension }) =>
  async () => {
    await vscode.commands.executeCommand('workbench.action.openWalkthrough', `${extension.id}#${WALKTHROUGH_ID}`, false);
    return true;
  };
