// The language server process driven over IPC with the fuzzer's cases: didOpen, a didChange per
// step (ranges computed as an editor would), hover and codeLens requests along the way. The server
// must stay up, answer every request, publish diagnostics for every event, and end with the same
// code lenses and diagnostics as a document freshly opened with the final text.
import * as path from 'path';
import { pathToFileURL } from 'url';
import { fork, ChildProcess } from 'child_process';
import { IPCMessageReader, IPCMessageWriter, createMessageConnection, MessageConnection } from 'vscode-jsonrpc/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { caseSeed, Checker, clampChange, createChecker, generateCase, loadSamples, Rng, runCase, Step } from './fuzz';
import type { TextChange } from '../../src/engine/parse/documents';

const SERVER = path.join(__dirname, '..', '..', 'src', 'server', 'main.js');

interface Server {
  proc: ChildProcess;
  conn: MessageConnection;
  /** Set when the process exits or logs an error. */
  dead: string | null;
  errors: string[];
  published: Map<string, unknown[][]>;
}

async function startServer(root: string): Promise<Server> {
  const proc = fork(SERVER, ['--node-ipc'], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  const conn = createMessageConnection(new IPCMessageReader(proc), new IPCMessageWriter(proc));
  const s: Server = { proc, conn, dead: null, errors: [], published: new Map() };
  let stderr = '';
  proc.stderr?.on('data', d => (stderr = (stderr + String(d)).slice(-4000)));
  proc.on('exit', (code, signal) => (s.dead ??= `server exited (code ${code}, signal ${signal}) ${stderr}`));
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: unknown[] }) => {
    const list = s.published.get(p.uri) ?? [];
    list.push(p.diagnostics);
    s.published.set(p.uri, list);
  });
  conn.onNotification('window/logMessage', (p: { type: number; message: string }) => {
    if (p.type === 1) s.errors.push(p.message);
  });
  conn.onNotification(() => undefined);
  conn.onRequest(() => null);
  conn.listen();
  const rootUri = pathToFileURL(root).href;
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: 'ws' }],
    capabilities: {},
  });
  conn.sendNotification('initialized', {});
  return s;
}

function stopServer(s: Server): void {
  s.conn.dispose();
  s.proc.kill();
}

/** A request that fails the case when the server dies or takes too long instead of answering. */
async function request<T>(s: Server, method: string, params: unknown, ms = 20000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${method}: no answer in ${ms} ms${s.dead ? ` (${s.dead})` : ''}`)), ms);
  });
  try {
    return await Promise.race([s.conn.sendRequest(method, params) as Promise<T>, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A document's code lenses as an editor shows them: each resolved (the server sends their
 * commands on codeLens/resolve, and a loop's summary while an open is analysed from the analysis).
 * The open's diagnostics are published by then (a hover waits for the open).
 */
async function resolvedLenses(s: Server, uri: string): Promise<unknown[]> {
  const lenses = (await request<{ command?: unknown }[] | null>(s, 'textDocument/codeLens', { textDocument: { uri } })) ?? [];
  await request(s, 'textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } });
  const out: unknown[] = [];
  for (const l of lenses) out.push(l.command ? l : await request(s, 'codeLens/resolve', l));
  return out;
}

function normalise(x: unknown, uri: string, name: string): string {
  return JSON.stringify(x ?? null)
    .split(uri)
    .join('<uri>')
    .split(name)
    .join('<name>');
}

export interface ServerSummary {
  cases: number;
  changes: number;
  requests: number;
  failures: string[];
  /** Case seeds whose difference from a fresh open is tree-sitter's error recovery (not failures). */
  parserDivergences: number[];
  ms: number;
}

/** Runs `cases` cases through one server process (a new one after a crash). */
export async function fuzzServer(opts: {
  seed: number;
  cases: number;
  maxSteps?: number;
  checkEachStep?: boolean;
}): Promise<ServerSummary> {
  const samples = loadSamples();
  const t0 = Date.now();
  const sum: ServerSummary = { cases: 0, changes: 0, requests: 0, failures: [], parserDivergences: [], ms: 0 };
  let ck: Checker | undefined;
  let s: Server | null = null;
  try {
    for (let i = 0; i < opts.cases; i++) {
      const seed = caseSeed(opts.seed ^ 0x5eed, i);
      const c = generateCase(seed, samples, opts.maxSteps ?? 48);
      const rng = new Rng(seed ^ 0xabcdef);
      s ??= await startServer(path.dirname(c.path));
      sum.cases++;
      // A file next to the sample (not on disk): its #includes resolve like the sample's.
      const name = `fuzz-${seed}.cu`;
      const uri = pathToFileURL(path.join(path.dirname(c.path), name)).href;
      const freshName = `fuzz-${seed}-fresh.cu`;
      const freshUri = pathToFileURL(path.join(path.dirname(c.path), freshName)).href;
      let doc = TextDocument.create(uri, 'cuda-cpp', 1, c.initial);
      let events = 1;
      const replay: Step[] = [];
      /** A difference from a fresh open that the same edits in process show as tree-sitter's own (see fuzz.ts runCase). */
      const parserDivergence = async () => {
        ck ??= await createChecker();
        if (!replay.length) return false;
        replay[replay.length - 1] = { ...replay[replay.length - 1], check: true };
        return !!runCase(ck, c, replay)?.parserDivergence;
      };
      const fail = (what: string) =>
        `case ${i} seed ${seed} (${c.sample}, ${c.origin}; run --seed ${opts.seed}): ${what}${s?.dead ? `\n  ${s.dead}` : ''}${
          s?.errors.length ? `\n  server errors: ${s.errors.join('\n')}` : ''
        }`;
      try {
        s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'cuda-cpp', version: 1, text: c.initial } });
        for (const step of c.steps) {
          let contentChanges: unknown[];
          if (step.kind === 'update') {
            contentChanges = [];
            let text = doc.getText();
            const replayed: TextChange[] = [];
            for (const raw of step.changes) {
              // Positions as the editor sends them (TextDocument.update edits in place: a copy).
              const ch = clampChange(text, raw);
              const cur = TextDocument.create(uri, 'cuda-cpp', 0, text);
              const range = { start: cur.positionAt(ch.start), end: cur.positionAt(ch.start + ch.length) };
              contentChanges.push({ range, text: ch.text });
              const start = cur.offsetAt(range.start);
              replayed.push({ start, length: cur.offsetAt(range.end) - start, text: ch.text });
              text = TextDocument.update(cur, [{ range, text: ch.text }], 1).getText();
            }
            replay.push({ ...step, changes: replayed, check: false });
          } else {
            contentChanges = [{ text: step.text }];
            replay.push({ ...step, check: false });
          }
          doc = TextDocument.update(doc, contentChanges as { text: string }[], doc.version + 1);
          s.conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: doc.version }, contentChanges });
          events++;
          sum.changes++;
          if (rng.chance(0.15)) {
            const at = doc.positionAt(rng.int(doc.getText().length + 1));
            await request(s, 'textDocument/hover', { textDocument: { uri }, position: at });
            sum.requests++;
          }
          if (rng.chance(0.05)) {
            await request(s, 'textDocument/codeLens', { textDocument: { uri } });
            sum.requests++;
          }
          if (s.dead) break;
          if (opts.checkEachStep) {
            const a = await resolvedLenses(s, uri);
            const probe = `${freshUri}-${events}`;
            s.conn.sendNotification('textDocument/didOpen', {
              textDocument: { uri: probe, languageId: 'cuda-cpp', version: 1, text: doc.getText() },
            });
            const b = await resolvedLenses(s, probe);
            s.conn.sendNotification('textDocument/didClose', { textDocument: { uri: probe } });
            if (normalise(a, uri, name) !== normalise(b, probe, path.basename(probe))) {
              sum.failures.push(
                fail(
                  `step ${events - 1} (${step.label} ${JSON.stringify(contentChanges).slice(0, 300)}): code lenses differ from a fresh open`,
                ),
              );
              break;
            }
          }
        }
        const lenses = await resolvedLenses(s, uri);
        s.conn.sendNotification('textDocument/didOpen', {
          textDocument: { uri: freshUri, languageId: 'cuda-cpp', version: 1, text: doc.getText() },
        });
        const freshLenses = await resolvedLenses(s, freshUri);
        sum.requests += 2;
        const pubs = s.published.get(uri) ?? [];
        const freshPubs = s.published.get(freshUri) ?? [];
        if (s.dead) sum.failures.push(fail('the server died'));
        else if (s.errors.length) sum.failures.push(fail('the server logged an error'));
        else if (pubs.length !== events) sum.failures.push(fail(`${pubs.length} publishDiagnostics for ${events} open/change events`));
        else if (
          (normalise(lenses, uri, name) !== normalise(freshLenses, freshUri, freshName) ||
            normalise(pubs.at(-1), uri, name) !== normalise(freshPubs.at(-1), freshUri, freshName)) &&
          (await parserDivergence())
        )
          sum.parserDivergences.push(seed);
        else if (normalise(lenses, uri, name) !== normalise(freshLenses, freshUri, freshName))
          sum.failures.push(
            fail(
              `code lenses differ from a fresh open:\n  ${normalise(lenses, uri, name).slice(0, 600)}\n  ${normalise(freshLenses, freshUri, freshName).slice(0, 600)}`,
            ),
          );
        else if (normalise(pubs.at(-1), uri, name) !== normalise(freshPubs.at(-1), freshUri, freshName))
          sum.failures.push(fail('diagnostics differ from a fresh open'));
      } catch (e) {
        sum.failures.push(fail(e instanceof Error ? e.message : String(e)));
      }
      s.conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
      s.conn.sendNotification('textDocument/didClose', { textDocument: { uri: freshUri } });
      s.published.delete(uri);
      s.published.delete(freshUri);
      if (s.dead || s.errors.length) {
        stopServer(s);
        s = null;
      }
    }
  } finally {
    if (s) stopServer(s);
  }
  sum.ms = Date.now() - t0;
  return sum;
}
