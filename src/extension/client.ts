// The language client: runs src/server/main.ts in a Node process over IPC.
import * as path from 'path';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';
import {
  AnalysisStatusNotification,
  Commands,
  CUDA_FILE_PATTERN,
  CUDA_HEADER_PATTERN,
  CUDA_LANGUAGE_IDS,
  ToolchainStatus,
  ToolchainStatusNotification,
  InitializationOptions,
  WorkspaceTrustNotification,
} from '../protocol';
import type { StatusBar } from './statusBar';
import { rememberedUnits } from './commands/chooseTranslationUnit';

/** The commands the server's hover markdown may link to (command: URIs); nothing else runs from a hover. */
const HOVER_COMMANDS = [Commands.showSass, Commands.compareVariants];

export async function startLanguageClient(
  context: vscode.ExtensionContext,
  output: vscode.OutputChannel,
  status: StatusBar,
  onToolchainStatus: (s: ToolchainStatus) => void = () => undefined,
): Promise<LanguageClient> {
  // Bundled (dist/extension.js, what the .vsix ships) the server is dist/server.js next to it;
  // compiled by tsc (out/src/extension/client.js) it is out/src/server/main.js.
  const module =
    path.basename(__filename) === 'extension.js' ? path.join(__dirname, 'server.js') : path.join(__dirname, '..', 'server', 'main.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  // Select on both language ids VS Code may assign and on the file pattern, so .cu/.cuh files
  // are served whether or not a C/C++ extension claims them.
  const documentSelector = [
    ...CUDA_LANGUAGE_IDS.map(language => ({ scheme: 'file', language })),
    ...CUDA_LANGUAGE_IDS.map(language => ({ scheme: 'untitled', language })),
    { scheme: 'file', pattern: CUDA_FILE_PATTERN },
    // Headers: served by the server only while they hold device code (protocol.ts).
    { scheme: 'file', pattern: CUDA_HEADER_PATTERN },
  ];
  const clientOptions: LanguageClientOptions = {
    documentSelector,
    outputChannel: output,
    // Headers changing on disk (a save elsewhere, a checkout) change the macros open files see.
    synchronize: {
      configurationSection: 'unrollLens',
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.{cuh,h,hpp,hh,hxx,inl}'),
    },
    // The loop hover links to "Show SASS": trust its markdown for exactly the commands it links.
    middleware: {
      provideHover: async (document, position, token, next) => {
        const hover = await next(document, position, token);
        for (const c of hover?.contents ?? []) if (c instanceof vscode.MarkdownString) c.isTrusted = { enabledCommands: HOVER_COMMANDS };
        return hover;
      },
    },
    // Variant builds are cached per machine in the extension's global storage.
    initializationOptions: {
      storagePath: context.globalStorageUri.fsPath,
      trusted: vscode.workspace.isTrusted,
      translationUnits: rememberedUnits(context.workspaceState),
    } satisfies InitializationOptions,
  };
  const client = new LanguageClient('unrollLens', 'Unroll Lens', serverOptions, clientOptions);
  context.subscriptions.push(client);
  status.starting();
  try {
    await client.start();
  } catch (e) {
    status.failed(String(e));
    output.appendLine(`Unroll Lens: the language server failed to start: ${e}`);
    throw e;
  }
  context.subscriptions.push(client.onNotification(AnalysisStatusNotification, s => status.update(s)));
  context.subscriptions.push(
    client.onNotification(ToolchainStatusNotification, s => {
      status.toolchain(s);
      onToolchainStatus(s);
    }),
  );
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(() => void client.sendNotification(WorkspaceTrustNotification, { trusted: true })),
  );
  status.ready();
  return client;
}
