// Extension entry point: starts the language server and wires commands and the status bar.
import * as vscode from 'vscode';
import { startLanguageClient } from './client';
// The explicit index: a stale out/src/extension/commands.js (before commands/ was split) would shadow './commands'.
import { registerCommands } from './commands/index';
import { StatusBar } from './statusBar';
import { rowOf } from './panel/resultsPanel';
import { ToolchainLanguageStatus, ToolchainStatusShown } from './toolchainStatus';

export interface UnrollLensApi {
  /** The running language client (tests use it to check the server answers). */
  client: Awaited<ReturnType<typeof startLanguageClient>>;
  /** The open results panels and what they show (tests check the panel a command opened). */
  panels: () => { title: string; result: import('../protocol').SweepResult | null }[];
  /** What the panel's Apply button does for a variant of a result (tests drive it without a webview). */
  applyVariant: (result: import('../protocol').SweepResult, variantId: string, confirmed?: boolean) => Promise<boolean>;
  /** What a click on a row of the panel does (reveal its source line): tests drive it without a webview. */
  revealVariant: (result: import('../protocol').SweepResult, variantId: string) => Promise<void>;
  /** The source line highlighted for the cursor in a SASS listing (tests check the navigation). */
  sassHighlightedSource: () => { uri: string; line: number } | null;
  /** What the toolchain's language status item shows (null until the server answered). */
  toolchainStatus: () => ToolchainStatusShown | null;
}

export async function activate(context: vscode.ExtensionContext): Promise<UnrollLensApi> {
  const output = vscode.window.createOutputChannel('Unroll Lens');
  context.subscriptions.push(output);
  const status = new StatusBar();
  context.subscriptions.push(status);
  let toolchain: ToolchainLanguageStatus | null = null;
  const client = await startLanguageClient(context, output, status, s => toolchain?.changed(s));
  toolchain = new ToolchainLanguageStatus(client);
  context.subscriptions.push(toolchain);
  toolchain.refresh().catch(e => output.appendLine(`toolchain status: ${e instanceof Error ? e.message : e}`));
  const { panels, sass } = registerCommands(context, client, output, toolchain);
  const languageStatus = toolchain;
  return {
    client,
    panels: () => panels.all,
    sassHighlightedSource: () => sass.highlightedSource,
    toolchainStatus: () => languageStatus.shown(),
    revealVariant: (result, id) => panels.reveal(result, rowOf(result, id)),
    applyVariant: (result, id, confirmed) =>
      panels.apply(
        result,
        result.variants.find(v => v.id === id),
        confirmed,
      ),
  };
}

export function deactivate(): Thenable<void> | undefined {
  return undefined; // the client is disposed through context.subscriptions
}
