// The Unroll Lens language server: keeps one incrementally parsed tree per open CUDA file and
// answers CodeLens, hover and diagnostics from its analysis.
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  MarkupContent,
  DidChangeConfigurationNotification,
  InitializeResult,
  TextDocumentSyncKind,
} from 'vscode-languageserver/node';
import {
  CudaDocuments,
  compileWasmWithBaselineOnly,
  type FileAnalysis,
  MacroTable,
  defaultCacheDir,
  fromLoopReport,
  isHeaderFile,
  mayHoldDeviceCode,
  processGuard,
  useRemedies,
} from '../engine';
import { codeLenses, diagnostics, hover, outlineCodeLenses, projectRunConfigured, resolveCodeLens } from './features';
import { LensStore } from './lensStore';
import {
  AnalysisStatusNotification,
  BenchLoopRequest,
  ClearCacheRequest,
  CompareKernelsRequest,
  DEFAULT_SETTINGS,
  ExportResultRequest,
  FileAnalysisRequest,
  ListResultsRequest,
  LoadResultRequest,
  InitializationOptions,
  LoopVariantsRequest,
  LoopSummaryLensData,
  PragmaEditsRequest,
  SassListingRequest,
  Settings,
  SweepRequest,
  SetTranslationUnitNotification,
  ToolchainInfoRequest,
  TranslationUnitsRequest,
  WorkspaceTrustNotification,
  isContentCheckedHeader,
} from '../protocol';
import { applyProblem, ResultsService } from './results';
import { readSettings, SECTION } from '../settings';
import { BenchService } from './bench';
import { clearBuildCache } from './buildCache';
import { DocumentFactsStore } from './facts';
import { RESTRICTED_MODE, ServerToolchain } from './toolchain';
import { uriToPath } from './uri';
import { VariantService } from './variants';
import { MacroService, editMayChangeMacros } from './macros';
import { toAnalysisStatus, toBenchLoopResult, toCompareKernelsResult, toFileAnalysisResult, toLoopVariantsResult } from './wire';
import { HeaderUnits } from './headers';
import { createServerConnection } from './connection';
import { exitCleanlyOnStop } from './shutdown';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { EDITOR_REMEDIES } from './remedies';
import { oversizedBytes, oversizedDiagnostic, oversizedText } from './oversized';
import { ServerText } from './serverText';

// The engine's messages name the editor's settings here, not the command line's environment.
useRemedies(EDITOR_REMEDIES);
const connection = createServerConnection();
/** Open documents' texts, kept in segments (serverText.ts). */
const texts = new Map<string, ServerText>();
let settings: Settings = { ...DEFAULT_SETTINGS };
let hasConfiguration = false;
let workspaceRoots: string[] = [];
/** Variant builds are cached in the extension's storage (passed by the client), else ~/.cache. */
let cacheDir = defaultCacheDir();
/** The extension's global storage (null: the client gave none, so there is no editor cache to clear). */
let storagePath: string | null = null;
compileWasmWithBaselineOnly();
const docsReady = CudaDocuments.create();
docsReady.catch(e => connection.console.error(`Unroll Lens: cannot load the CUDA parser: ${e}`));

/** Document events must apply in order: offsets of an edit refer to the text after the previous one. */
let syncQueue: Promise<unknown> = Promise.resolve();
/**
 * Settles once every document event received so far has its text parsed: an open's analysis may
 * still be running then (CodeLens answers from the parse meanwhile). A task calls `parsed` when it
 * has; the end of the task counts as that.
 */
let parsedQueue: Promise<unknown> = Promise.resolve();
function inOrder(task: (parsed: () => void) => Promise<void>): void {
  let parsed!: () => void;
  parsedQueue = new Promise<void>(resolve => (parsed = resolve));
  syncQueue = syncQueue
    .then(() => task(parsed))
    .catch(e => connection.console.error(`Unroll Lens: ${e instanceof Error ? e.stack : e}`))
    .finally(parsed);
}

/** How long an open analyses before it lets requests that came meanwhile be answered. */
const OPEN_STEP_MS = 15;
const nextTurn = () => new Promise<void>(resolve => setImmediate(resolve));

/**
 * Analyses a document just opened (docs.openParsed) one function at a time, letting the event loop
 * answer requests every OPEN_STEP_MS: a CodeLens request that came with the open is answered from
 * the parse at once (outlineCodeLenses), the loops' summaries resolved when this is done.
 */
async function analyseOpened(docs: CudaDocuments, uri: string): Promise<FileAnalysis | null> {
  const steps = docs.analysisSteps(uri);
  await nextTurn();
  let until = performance.now() + OPEN_STEP_MS;
  for (let r = steps.next(); ; r = steps.next()) {
    if (r.done) return r.value ?? docs.analysis(uri);
    if (performance.now() < until) continue;
    await nextTurn();
    until = performance.now() + OPEN_STEP_MS;
  }
}

function log(message: string): void {
  connection.console.log(`[${new Date().toISOString().slice(11, 23)}] ${message}`);
}

connection.onInitialize((params): InitializeResult => {
  hasConfiguration = !!params.capabilities.workspace?.configuration;
  workspaceRoots = (params.workspaceFolders ?? []).map(f => uriToPath(f.uri)).filter((p): p is string => p !== null);
  const init = (params.initializationOptions ?? {}) as InitializationOptions;
  if (init.storagePath) {
    storagePath = init.storagePath;
    cacheDir = path.join(init.storagePath, 'builds');
  }
  toolchain.setTrusted(init.trusted === true);
  for (const [header, unit] of Object.entries(init.translationUnits ?? {})) headerUnits.set(header, unit);
  if (!toolchain.trusted) log('workspace not trusted: analysis only, no builds or runs');
  log(`server ${process.version} pid ${process.pid} started for ${params.clientInfo?.name ?? 'unknown client'}`);
  return {
    capabilities: {
      codeLensProvider: { resolveProvider: true },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      hoverProvider: true,
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
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
  const cfg: unknown = await connection.workspace.getConfiguration(SECTION);
  // A wrong value falls back to its default; say which one, once per refresh.
  settings = readSettings(cfg, message => connection.console.warn(`Unroll Lens settings: ${message}`));
  sass.reset();
  macros.reset();
  log(`settings: ${JSON.stringify(settings)}`);
  lookForTools();
  // Tools or flags may have changed (and documents opened before the first settings arrived
  // were built without them): rebuild what is open; the build cache makes this cheap.
  const docs = await docsReady;
  for (const [uri, doc] of texts) {
    const a = docs.analysis(uri);
    if (a) void sass.buildFile(uri, doc.getText(), a);
  }
}

connection.onDidChangeConfiguration(async () => {
  await refreshSettings();
  await refreshMacros();
  for (const uri of texts.keys()) await publish(uri, 0);
  refreshCodeLens();
});

/**
 * The tools may be elsewhere now (settings, trust): look for them again at once, so the status bar
 * and the language status item follow (their notification), also with no CUDA file open.
 */
function lookForTools(): void {
  if (toolchain.trusted) toolchain.survey().catch(() => undefined);
}

/** CodeLens titles carry SASS facts: ask the client to fetch them again (older clients cannot). */
function refreshCodeLens(): void {
  connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
}

// New compiler or GPU facts change diagnostics and CodeLens titles.
const facts = new DocumentFactsStore(uri => {
  void publish(uri, 0);
  refreshCodeLens();
});
const toolchain = new ServerToolchain(
  connection,
  () => settings,
  () => workspaceRoots,
);
/** Headers' translation units: chosen by the user, else from compile_commands.json. */
let loadedDocs: CudaDocuments | null = null;
void docsReady.then(d => (loadedDocs = d));
const headerUnits = new HeaderUnits(
  () => workspaceRoots,
  file => ({
    compileCommands: settings.compileCommands ? path.resolve(workspaceRoots[0] ?? '.', settings.compileCommands) : null,
    // A unit that instantiates one of the header's functions comes first.
    functions: loadedDocs?.analysis(pathToFileURL(file).toString())?.kernels.map(k => k.name) ?? [],
  }),
);
function headerUnit(uri: string) {
  const file = uriToPath(uri);
  return file ? headerUnits.unitFor(file) : null;
}
/** Builds on open/save, loop variants and SASS diagnostics (refreshSettings resets and rebuilds through it). */
const sass = new VariantService(
  connection,
  toolchain,
  facts,
  () => settings,
  () => cacheDir,
  file => headerUnits.unitFor(file),
);
const bench = new BenchService(
  toolchain,
  facts,
  () => settings,
  () => cacheDir,
  file => headerUnits.unitFor(file)?.unit ?? null,
  () => workspaceRoots,
);
/** Each document's macros, from its headers (nothing runs: also in an untrusted workspace). */
const macros = new MacroService(toolchain, () => settings, log);
const results = new ResultsService(
  connection,
  toolchain,
  facts,
  () => settings,
  () => cacheDir,
  () => workspaceRoots,
);

function sassFacts(uri: string) {
  // (the whole text is made only when there are facts to match it with)
  const text = facts.has(uri) ? texts.get(uri)?.getText() : undefined;
  return text === undefined ? null : facts.get(uri, text);
}

async function publish(uri: string, elapsedMs: number): Promise<void> {
  const docs = await docsReady;
  const analysis = docs.analysis(uri);
  if (!analysis) return;
  const text = facts.has(uri) ? (texts.get(uri)?.getText() ?? '') : null;
  const sassDiagnostics = text === null ? [] : sass.diagnostics(uri, text, analysis);
  connection.sendDiagnostics({ uri, diagnostics: [...diagnostics(analysis, settings), ...sassDiagnostics] });
  connection.sendNotification(AnalysisStatusNotification, toAnalysisStatus(uri, analysis, elapsedMs));
}

/** Over the source cap: not analysed (any state dropped), said once as a warning and as the file's diagnostic. */
const warnedOversized = new Set<string>();
function refuseOversized(docs: CudaDocuments, uri: string, text: string | ServerText): boolean {
  const bytes = oversizedBytes(text);
  if (bytes === null) return false;
  if (docs.text(uri) !== undefined) docs.close(uri);
  log(`not analysing ${uri}: ${bytes} bytes`);
  connection.sendDiagnostics({ uri, diagnostics: [oversizedDiagnostic(bytes)] });
  if (!warnedOversized.has(uri)) void connection.window.showWarningMessage(`${uri.split('/').pop()}: ${oversizedText(bytes)}`);
  warnedOversized.add(uri);
  return true;
}

connection.onDidOpenTextDocument(({ textDocument }) =>
  inOrder(async parsed => {
    const t0 = performance.now();
    texts.set(textDocument.uri, ServerText.create(textDocument.uri, textDocument.languageId, textDocument.version, textDocument.text));
    const docs = await docsReady;
    if (refuseOversized(docs, textDocument.uri, textDocument.text)) return;
    // An untitled buffer is analysed too; its URI stands in for the path.
    const file = uriToPath(textDocument.uri);
    // A header qualifies by CUDA keywords, library macros, or its own project's macros (its headers').
    const header = isContentCheckedHeader(textDocument.uri);
    let known = macros.knownTableFor(file, textDocument.text);
    if (header && !mayHoldDeviceCode(textDocument.text)) {
      known ??= macros.tableFor(file, textDocument.text);
      if (!known.mentionsDeviceCode(textDocument.text)) {
        log(`not serving ${textDocument.uri}: a header without device code`);
        return;
      }
    }
    // The first reading of a file's headers can take a second (all of CUB): the file opens with
    // the built-in table and gets its own right after; queued once the requests that came with
    // the open (CodeLens, hover) are in line, so they do not wait for it.
    docs.openParsed(textDocument.uri, textDocument.text, file ?? textDocument.uri, known ?? MacroTable.builtin);
    parsed();
    const a = await analyseOpened(docs, textDocument.uri);
    if (!a) return;
    if (!known)
      setTimeout(
        () =>
          inOrder(async () => {
            const text = texts.get(textDocument.uri)?.getText();
            if (text === undefined || !docs.has(textDocument.uri)) return;
            const t1 = performance.now();
            const changed = docs.setMacros(textDocument.uri, macros.tableFor(file, text));
            log(`${textDocument.uri}: macros read from its headers (${(performance.now() - t1).toFixed(0)} ms)`);
            if (changed) {
              await publish(textDocument.uri, 0);
              refreshCodeLens();
            }
            // The build on open uses the analysis (which loops to roll): made with the file's own macros.
            const analysis = docs.analysis(textDocument.uri);
            if (analysis) void sass.buildFile(textDocument.uri, text, analysis);
          }),
        20,
      );
    const ms = performance.now() - t0;
    log(
      `opened ${textDocument.uri}: ${a.kernels.length} device functions, ${a.kernels.reduce((n, k) => n + k.loops.length, 0)} loops (${ms.toFixed(1)} ms)`,
    );
    await publish(textDocument.uri, ms);
    // A header is built through a translation unit that includes it, when one is known.
    if (known) void sass.buildFile(textDocument.uri, textDocument.text, a);
  }),
);

connection.onDidSaveTextDocument(({ textDocument }) =>
  inOrder(async () => {
    const text = texts.get(textDocument.uri)?.getText();
    // A saved header may be one that other open files include: their macros are read again.
    if (macros.revalidate()) await refreshMacros();
    const a = (await docsReady).analysis(textDocument.uri);
    if (text !== undefined && a) void sass.buildFile(textDocument.uri, text, a);
  }),
);

connection.onDidChangeTextDocument(({ textDocument, contentChanges }) =>
  inOrder(async () => {
    const t0 = performance.now();
    let doc = texts.get(textDocument.uri);
    const docs = await docsReady;
    if (!doc) return;
    if (!docs.has(textDocument.uri)) {
      // A header not served yet: start serving it once it holds device code.
      doc = doc.update(contentChanges, textDocument.version);
      if (refuseOversized(docs, textDocument.uri, doc.getText())) return;
      const file = uriToPath(textDocument.uri);
      const table = macros.tableFor(file, doc.getText());
      if (!mayHoldDeviceCode(doc.getText()) && !table.mentionsDeviceCode(doc.getText())) return;
      docs.open(textDocument.uri, doc.getText(), file ?? textDocument.uri, table);
      await publish(textDocument.uri, performance.now() - t0);
      return;
    }
    let directivesTouched = false;
    for (const change of contentChanges) {
      if ('range' in change) {
        const start = doc.offsetAt(change.range.start);
        const end = doc.offsetAt(change.range.end);
        directivesTouched ||= editMayChangeMacros(doc.text, start, end - start, change.text);
        docs.update(textDocument.uri, [{ start, length: end - start, text: change.text }]);
      } else {
        directivesTouched = true;
        docs.replace(textDocument.uri, change.text);
      }
      doc = doc.update([change], textDocument.version);
    }
    if (refuseOversized(docs, textDocument.uri, doc)) return;
    // An edited #define or #include may change what a macro means (the table is reused when not).
    if (directivesTouched) docs.setMacros(textDocument.uri, macros.tableFor(uriToPath(textDocument.uri), doc.getText()));
    await publish(textDocument.uri, performance.now() - t0);
  }),
);

/** Every open document's macros read again (headers changed, settings changed); republished where they differ. */
async function refreshMacros(): Promise<void> {
  const docs = await docsReady;
  for (const [uri, doc] of texts) {
    if (!docs.has(uri)) continue;
    if (docs.setMacros(uri, macros.tableFor(uriToPath(uri), doc.getText()))) await publish(uri, 0);
  }
  refreshCodeLens();
}

connection.onDidChangeWatchedFiles(() =>
  inOrder(async () => {
    if (macros.revalidate()) await refreshMacros();
  }),
);

connection.onDidCloseTextDocument(({ textDocument }) =>
  inOrder(async () => {
    macros.forget(uriToPath(textDocument.uri));
    texts.delete(textDocument.uri);
    sass.close(textDocument.uri);
    facts.delete(textDocument.uri);
    lensStore.forget(textDocument.uri);
    (await docsReady).close(textDocument.uri);
    connection.sendDiagnostics({ uri: textDocument.uri, diagnostics: [] });
  }),
);

/** Each document's latest CodeLens answers: the client resolves the lenses it shows. */
const lensStore = new LensStore();
connection.onCodeLens(async ({ textDocument }) => {
  const uri = textDocument.uri;
  await parsedQueue;
  const docs = await docsReady;
  // An open still analysing (analyseOpened): the lenses the parse gives, summaries resolved later.
  const analysis = docs.analysed(uri);
  const outline = analysis ? null : docs.outline(uri);
  // a file that builds a program by itself (or through the project's compile command) can compare its kernels
  const main = analysis ? docs.definesMain(uri) : (outline?.definesMain ?? false);
  const program = main || settings.profile.compileCommand.length > 0 || projectRunConfigured(settings);
  // What the lenses are built from, as it is now: a resolve builds them again from the same.
  const [now, sass, header] = [settings, sassFacts(uri), headerUnit(uri)];
  if (analysis) return lensStore.hold(uri, () => codeLenses(uri, analysis, now, sass, header, program));
  return lensStore.hold(uri, () => (outline ? outlineCodeLenses(uri, outline, now, sass, header, program) : []));
});

connection.onCodeLensResolve(async lens => {
  const held = lensStore.resolve(lens);
  if (held) return held;
  await syncQueue;
  const uri = (lens.data as LoopSummaryLensData | undefined)?.uri;
  const analysis = uri === undefined ? null : (await docsReady).analysis(uri);
  return analysis ? resolveCodeLens(lens, analysis) : lens;
});

connection.onHover(async ({ textDocument, position }) => {
  await syncQueue;
  const analysis = (await docsReady).analysis(textDocument.uri);
  const known = sassFacts(textDocument.uri);
  // Answered from what is known: the i-cache prediction needs the build of this text, so without
  // one there is nothing to read the launches for; a build still running is said, not waited for.
  const text = known?.file ? texts.get(textDocument.uri)?.getText() : undefined;
  const icache = analysis && text !== undefined && known?.file ? sass.icacheContext(text, analysis, textDocument.uri) : null;
  const h = analysis
    ? hover(analysis, position, known, headerUnit(textDocument.uri), textDocument.uri, icache, sass.building(textDocument.uri))
    : null;
  if (h && !toolchain.trusted && MarkupContent.is(h.contents)) h.contents.value += `\n\n_${RESTRICTED_MODE}._`;
  return h;
});

connection.onNotification(WorkspaceTrustNotification, async ({ trusted }) => {
  toolchain.setTrusted(trusted);
  log(`workspace trust: ${trusted ? 'trusted: builds enabled' : 'not trusted'}`);
  if (!trusted) return;
  lookForTools();
  // What was opened before trust was granted is built now.
  const docs = await docsReady;
  for (const [uri, doc] of texts) {
    const a = docs.analysis(uri);
    if (a) void sass.buildFile(uri, doc.getText(), a);
  }
});

connection.onRequest(FileAnalysisRequest, async p => {
  await syncQueue;
  const analysis = (await docsReady).analysis(p.uri);
  return analysis ? toFileAnalysisResult(analysis, texts.get(p.uri)?.getText() ?? '') : null;
});

/** The current text and analysis of an open document, after pending edits are applied. */
async function openDocument(uri: string) {
  await syncQueue;
  const analysis = (await docsReady).analysis(uri);
  const text = texts.get(uri)?.getText();
  if (!analysis || text === undefined) throw new Error('the file is not open in the Unroll Lens server');
  return { analysis, text };
}

connection.onRequest(LoopVariantsRequest, async (p, token) => {
  const { analysis, text } = await openDocument(p.uri);
  const report = await sass.buildLoop(p.uri, text, analysis, p.line, p.factors, token, p.workDoneToken);
  const result = fromLoopReport(report, await results.convertContext(uriToPath(p.uri)!, analysis));
  results.remember(p.uri, text, result);
  return toLoopVariantsResult(report, result);
});

connection.onRequest(SassListingRequest, async (p, token) => {
  const { analysis, text } = await openDocument(p.uri);
  return sass.listing(p.uri, text, analysis, p, token);
});

/** GPU runs need a .cu file's own program: a header's loops have SASS variants only. */
function notHeader(uri: string): void {
  if (isHeaderFile(uriToPath(uri) ?? uri))
    throw new Error(
      'GPU benchmarks and sweeps run a .cu file: open the translation unit that includes this header (SASS variants work here), ' +
        "or set unrollLens.project.buildCommand and runCommand to benchmark a header's loop through the project's own build and run",
    );
}

connection.onRequest(TranslationUnitsRequest, p => {
  const file = uriToPath(p.uri);
  if (!file || !isHeaderFile(file)) throw new Error('not a header: a .cu file is its own translation unit');
  return headerUnits.candidates(file);
});

connection.onNotification(SetTranslationUnitNotification, ({ header, unit }) => {
  headerUnits.set(header, unit);
  log(`translation unit for ${header}: ${unit ?? 'none chosen'}`);
  refreshCodeLens();
  // The header's facts came from another unit: build it again through the new one.
  void docsReady.then(docs => {
    for (const [uri, doc] of texts) {
      if (uriToPath(uri) !== header) continue;
      facts.delete(uri);
      const a = docs.analysis(uri);
      if (a) void sass.buildFile(uri, doc.getText(), a);
    }
  });
});

connection.onRequest(BenchLoopRequest, async (p, token) => {
  // a header's loop runs through the project's own build and run (unrollLens.project.*), built through its unit
  if (!projectRunConfigured(settings)) notHeader(p.uri);
  const { analysis, text } = await openDocument(p.uri);
  const result = await bench.benchLoop(p.uri, text, analysis, p.line, p.factors, token, p.workDoneToken);
  // GPU time is worth keeping: a finished benchmark is saved like a sweep.
  const savedPath = result.complete ? results.save(result) : null;
  results.remember(p.uri, text, result);
  return toBenchLoopResult(result, savedPath);
});

connection.onRequest(CompareKernelsRequest, async (p, token) => {
  notHeader(p.uri);
  const { analysis, text } = await openDocument(p.uri);
  const c = await bench.compareKernels(p.uri, text, analysis, p, token, p.workDoneToken);
  // saved like a benchmark: "Open a saved result…" shows the ladder again
  return toCompareKernelsResult(c, c.result.complete ? results.save(c.result) : null);
});

connection.onRequest(SweepRequest, async (p, token) => {
  notHeader(p.uri);
  const { analysis, text } = await openDocument(p.uri);
  return results.sweep(p, text, analysis, token);
});

connection.onRequest(ListResultsRequest, () => results.list());
connection.onRequest(LoadResultRequest, p => results.load(p.path));
connection.onRequest(ExportResultRequest, p => results.exportResult(p));
connection.onRequest(ClearCacheRequest, p => clearBuildCache(storagePath, p));
connection.onRequest(ToolchainInfoRequest, p => toolchain.info(p?.recheck === true));

connection.onRequest(PragmaEditsRequest, async p => {
  const { analysis, text } = await openDocument(p.uri);
  // A planted result must not pick the file Apply edits: checked here, where it can be tested.
  const problem = applyProblem(p, uriToPath(p.uri), text, analysis, workspaceRoots);
  return problem ? { edits: [], problems: [problem] } : results.pragmaEdits(text, analysis, p.factors);
});

connection.onCodeAction(async ({ textDocument, range }) => {
  await syncQueue;
  const analysis = (await docsReady).analysis(textDocument.uri);
  const text = texts.get(textDocument.uri)?.getText();
  return analysis && text !== undefined ? results.codeActions(textDocument.uri, text, analysis, range) : [];
});

exitCleanlyOnStop(log);
connection.onExit(() => processGuard.reapAll());
connection.listen();
