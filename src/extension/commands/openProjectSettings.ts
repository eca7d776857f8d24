// "Set a Project's Build and Run": the Settings editor on unrollLens.project.* (the walkthrough's
// project step). The commands are restricted settings: VS Code ignores a workspace's values for
// them until the workspace is trusted, so a cloned repository cannot name a command to run.
import * as vscode from 'vscode';
import type { CommandFactory } from './context';

export const openProjectSettings: CommandFactory = () => async () => {
  await vscode.commands.executeCommand('workbench.action.openSettings', 'unrollLens.project');
  return true;
};
