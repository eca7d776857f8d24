// The command table: every command id maps to the factory of the one feature module that
// implements it. Typed over `Commands`, so an id without a factory does not compile.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { Commands } from '../../protocol';
import { benchmarkLoop } from './benchmarkLoop';
import { chooseTranslationUnit } from './chooseTranslationUnit';
import { clearBuildCache } from './clearBuildCache';
import type { CommandContext, CommandFactory } from './context';
import { sassVariants } from './sassVariants';
import { showLoops } from './showLoops';
import { showOutput } from './showOutput';
import { sweepKernel } from './sweep';
import { showResults } from './showResults';
import { ResultsPanels } from '../panel/resultsPanel';
import { SassDocuments } from '../sassDocuments';
import { showSass } from './showSass';
import { showSassForLine } from './showSassForLine';
import { goToSourceLine } from './goToSourceLine';
import { compareVariants } from './compareVariants';
import { compareKernels } from './compareKernels';
import { checkTool } from './checkTool';
import { openWalkthrough } from './openWalkthrough';
import { openSample } from './openSample';
import { openProjectSettings } from './openProjectSettings';
import type { ToolchainLanguageStatus } from '../toolchainStatus';

type CommandId = (typeof Commands)[keyof typeof Commands];

const COMMANDS: Record<CommandId, CommandFactory> = {
  [Commands.benchmarkLoop]: benchmarkLoop,
  [Commands.sweepKernel]: sweepKernel,
  [Commands.showLoops]: showLoops,
  [Commands.showOutput]: showOutput,
  [Commands.sassVariants]: sassVariants,
  [Commands.showResults]: showResults,
  [Commands.chooseTranslationUnit]: chooseTranslationUnit,
  [Commands.clearBuildCache]: clearBuildCache,
  [Commands.showSass]: showSass,
  [Commands.showSassForLine]: showSassForLine,
  [Commands.goToSourceLine]: goToSourceLine,
  [Commands.compareVariants]: compareVariants,
  [Commands.compareKernels]: compareKernels,
  [Commands.checkTool]: checkTool,
  [Commands.openWalkthrough]: openWalkthrough,
  [Commands.openSample]: openSample,
  [Commands.openProjectSettings]: openProjectSettings,
};

export function registerCommands(
  context: vscode.ExtensionContext,
  client: LanguageClient,
  output: vscode.OutputChannel,
  toolchain: ToolchainLanguageStatus,
): { panels: ResultsPanels; sass: SassDocuments } {
  const panels = new ResultsPanels(context.extensionUri, client, output);
  context.subscriptions.push(panels);
  const sass = new SassDocuments(client, output);
  context.subscriptions.push(sass);
  const ctx: CommandContext = {
    client,
    output,
    panels,
    sass,
    subscriptions: context.subscriptions,
    state: context.workspaceState,
    toolchain,
    extension: { id: context.extension.id, uri: context.extensionUri, globalStorage: context.globalStorageUri },
  };
  for (const [id, factory] of Object.entries(COMMANDS)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, factory(ctx)));
  }
  return { panels, sass };
}
