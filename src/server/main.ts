// The Unroll Lens language server: keeps one incrementally parsed tree per open CUDA file and
// answers CodeLens, hover and diagnostics from its analysis.
import {
  createConnection, DidChangeConfigurationNotification, InitializeResult, ProposedFeatures,
  TextDocumentSyncKind,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { fileURLToPath } from 'url';
import { CudaDocuments } from '../engine/parse/documents';
import { codeLenses, diagnostics, hover } from './features';
import {
  AnalysisStatus, AnalysisStatusNotification, DEFAULT_SETTINGS, FileAnalysisParams, FileAnalysisRequest,
  FileAnalysisResult, Settings,
} from '../protocol';

const connection = createConnection(ProposedFeatures.all);
const texts = new Map<string, TextDocument>();
let settings: Settings = { ...DEFAULT_SETTINGS };
let hasConfiguration = false;
const docsReady = CudaDocuments.create();
docsReady.catch(e => connection.console.error(`Unroll Lens: cannot load the CUDA parser: ${e}`));

/** Document events must apply in order: offsets of an edit refer to the text after the previous one. */
let syncQueue: Promise<unknown> = Promise.resolve();
function inOrder(task: () => Promise<void>): void {
  syncQueue = syncQueue.then(task).catch(e => connection.console.error(`Unroll Lens: ${e instanceof Error ? e.stack : e}`));
}

function uriToPath(uri: string): string {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
  } catch {
    return uri;
  }
}

function log(message: string): void {
  connection.console.log(`[${new Date().toISOString().slice(11, 23)}] ${message}`);
}

connection.onInitialize((params): InitializeResult => {
  hasConfiguration = !!params.capabilities.workspace?.configuration;
  log(`server ${process.version} pid ${process.pid} started for ${params.clientInfo?.name ?? 'unknown client'}`);
  return {
    capabilities: {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
      codeLensProvider: { resolveProvider: false },
      hoverProvider: true,
    },
    serverInfo: { name: 'unroll-lens' },
  };
});

connection.onInitialized(async () => {
  if (hasConfiguration) {
    await connection.client.register(DidChangeConfigurationNotification.type, { section: 'unrollLens' });
    await refreshSettings();
  }
});

async function refreshSettings(): Promise<void> {
  if (!hasConfiguration) return;
  const cfg = (await connection.workspace.getConfiguration('unrollLens')) ?? {};
  settings = {
    bloatThresholdStatements: Number(cfg.bloatThresholdStatements ?? DEFAULT_SETTINGS.bloatThresholdStatements),
    codeLensEnabled: cfg.codeLens?.enabled ?? DEFAULT_SETTINGS.codeLensEnabled,
  };
  log(`settings: ${JSON.stringify(settings)}`);
}

connection.onDidChangeConfiguration(async () => {
  await refreshSettings();
  for (const uri of texts.keys()) await publish(uri, 0);
  connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
});

async function publish(uri: string, elapsedMs: number): Promise<void> {
  const docs = await docsReady;
  const analysis = docs.analysis(uri);
  if (!analysis) return;
  connection.sendDiagnostics({ uri, diagnostics: diagnostics(analysis, settings) });
  const status: AnalysisStatus = {
    uri,
    kernels: analysis.kernels.length,
    loops: analysis.kernels.reduce((n, k) => n + k.loops.length, 0),
    pragmas: analysis.kernels.reduce((n, k) => n + k.loops.filter(l => l.pragma).length, 0),
    manualUnrolls: analysis.kernels.reduce((n, k) => n + k.manualUnrolls.length, 0),
    hasSyntaxErrors: analysis.hasSyntaxErrors,
    elapsedMs,
  };
  connection.sendNotification(AnalysisStatusNotification, status);
}

connection.onDidOpenTextDocument(({ textDocument }) => inOrder(async () => {
  const t0 = performance.now();
  texts.set(textDocument.uri, TextDocument.create(textDocument.uri, textDocument.languageId, textDocument.version, textDocument.text));
  const docs = await docsReady;
  const a = docs.open(textDocument.uri, textDocument.text, uriToPath(textDocument.uri));
  const ms = performance.now() - t0;
  log(`opened ${textDocument.uri}: ${a.kernels.length} device functions, ${a.kernels.reduce((n, k) => n + k.loops.length, 0)} loops (${ms.toFixed(1)} ms)`);
  await publish(textDocument.uri, ms);
}));

connection.onDidChangeTextDocument(({ textDocument, contentChanges }) => inOrder(async () => {
  const t0 = performance.now();
  let doc = texts.get(textDocument.uri);
  const docs = await docsReady;
  if (!doc) return;
  for (const change of contentChanges) {
    if ('range' in change) {
      const start = doc.offsetAt(change.range.start);
      const end = doc.offsetAt(change.range.end);
      docs.update(textDocument.uri, [{ start, length: end - start, text: change.text }]);
    } else {
      docs.replace(textDocument.uri, change.text);
    }
    doc = TextDocument.update(doc, [change], textDocument.version);
  }
  texts.set(textDocument.uri, doc);
  await publish(textDocument.uri, performance.now() - t0);
}));

connection.onDidCloseTextDocument(({ textDocument }) => inOrder(async () => {
  texts.delete(textDocument.uri);
  (await docsReady).close(textDocument.uri);
  connection.sendDiagnostics({ uri: textDocument.uri, diagnostics: [] });
}));

connection.onCodeLens(async ({ textDocument }) => {
  await syncQueue;
  const analysis = (await docsReady).analysis(textDocument.uri);
  return analysis ? codeLenses(textDocument.uri, analysis, settings) : [];
});

connection.onHover(async ({ textDocument, position }) => {
  await syncQueue;
  const analysis = (await docsReady).analysis(textDocument.uri);
  return analysis ? hover(analysis, position) : null;
});

connection.onRequest(FileAnalysisRequest, async (p: FileAnalysisParams): Promise<FileAnalysisResult> => {
  await syncQueue;
  return (await docsReady).analysis(p.uri);
});

connection.listen();
