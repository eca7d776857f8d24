// What every command factory gets (rust-analyzer's Ctx): the running client, the server log and
// where a feature puts the disposables it owns, so each feature module is self-contained.
import type * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ResultsPanels } from '../panel/resultsPanel';
import type { SassDocuments } from '../sassDocuments';
import type { ToolchainLanguageStatus } from '../toolchainStatus';

export interface CommandContext {
  client: LanguageClient;
  output: vscode.OutputChannel;
  /** The results panels (one per loop or sweep). */
  panels: ResultsPanels;
  /** The open SASS listings (unroll-lens-sass: documents) and their line maps. */
  sass: SassDocuments;
  /** Disposed with the extension: decorations and listeners a feature creates. */
  subscriptions: vscode.Disposable[];
  /** The workspace's state (remembered translation units of headers). */
  state: vscode.Memento;
  /** The toolchain's language status item, which asks the server for the checks. */
  toolchain: ToolchainLanguageStatus;
  /** This extension: its id, its folder (what the .vsix ships) and its global storage. */
  extension: { id: string; uri: vscode.Uri; globalStorage: vscode.Uri };
}

// Commands take what their CodeLens or a caller passes, so their arguments are not typed here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- VS Code passes commands whatever their caller gave
type Command = (...args: any[]) => unknown;
export type CommandFactory = (ctx: CommandContext) => Command;
