// Integration tests that run INSIDE a VS Code extension host with the extension under
// development loaded and <repo>/cuda-samples opened as the workspace folder.
// Launch with `npm run test:integration` (offline, code-server) or
// `npm run test:integration:electron` (downloads VS Code).
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { LoopVariantsResult } from '../../../src/protocol';

const EXTENSION_ID = 'unroll-lens.unroll-lens';
const COMMANDS = ['unrollLens.benchmarkLoop', 'unrollLens.sweepKernel', 'unrollLens.showLoops', 'unrollLens.showOutput'];
const READY_TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value accepted by `ok`, or throws after `timeoutMs`. */
async function poll<T>(what: string, probe: () => Thenable<T> | T, ok: (v: T) => boolean, timeoutMs = READY_TIMEOUT_MS): Promise<T> {
  const start = Date.now();
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await probe();
      if (ok(last)) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() - start > timeoutMs) {
      const detail = lastError ? `last error: ${String(lastError)}` : `last value: ${JSON.stringify(last, null, 1)?.slice(0, 2000)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${detail}`);
    }
    await sleep(250);
  }
}

function workspaceRoot(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (expected <repo>/cuda-samples)');
  return folder.uri;
}

async function openSample(name: string): Promise<vscode.TextDocument> {
  const uri = vscode.Uri.joinPath(workspaceRoot(), name);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc);
  return doc;
}

function lensTitles(lenses: vscode.CodeLens[] | undefined): string[] {
  return (lenses ?? []).map(l => l.command?.title ?? '').filter(t => t.length > 0);
}

function hoverText(hovers: vscode.Hover[] | undefined): string {
  return (hovers ?? [])
    .flatMap(h => h.contents)
    .map(c => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))
    .join('\n');
}

/** 0-based line of the first line matching `re` at or after `from`. */
function findLine(doc: vscode.TextDocument, re: RegExp, from = 0): number {
  for (let i = from; i < doc.lineCount; i++) if (re.test(doc.lineAt(i).text)) return i;
  return -1;
}

suite('Unroll Lens (extension host)', () => {
  let matmul: vscode.TextDocument;

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} is not loaded`);
    matmul = await openSample('matmul_unroll.cu');
    await ext.activate();
  });

  test('activates and registers its commands', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.ok(ext.isActive, 'extension did not activate');
    const all = new Set(await vscode.commands.getCommands(true));
    const missing = COMMANDS.filter(c => !all.has(c));
    assert.deepStrictEqual(missing, [], `commands not registered: ${missing.join(', ')}`);
  });

  test('every command in package.json contributes.commands is registered', async () => {
    const contributed: string[] = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes?.commands ?? []).map(
      (c: { command: string }) => c.command,
    );
    assert.ok(contributed.length > 0, 'package.json contributes no commands');
    const all = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.filter(c => !all.has(c));
    assert.deepStrictEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });

  test('runs the esbuild bundles the .vsix ships (dist/extension.js, dist/server.js)', () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const dist = path.join(ext.extensionPath, 'dist');
    const loaded = Object.keys(require.cache);
    assert.ok(loaded.includes(path.join(dist, 'extension.js')), `${path.join(dist, 'extension.js')} is not loaded in the extension host`);
    const fromOut = loaded.filter(f => f.startsWith(path.join(ext.extensionPath, 'out', 'src') + path.sep));
    assert.deepStrictEqual(fromOut, [], 'the extension host loaded the unbundled tsc output');
    // The language server is a child process of this extension host (Linux: read /proc).
    if (!fs.existsSync('/proc/self/status')) return;
    const children = fs
      .readdirSync('/proc')
      .filter(d => /^\d+$/.test(d))
      .flatMap(pid => {
        try {
          const ppid = Number(/^PPid:\s*(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
          return ppid === process.pid ? [fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')] : [];
        } catch {
          return []; // the process ended while we looked
        }
      });
    assert.ok(
      children.some(c => c.includes(path.join(dist, 'server.js'))),
      `no child process runs ${path.join(dist, 'server.js')}: ${JSON.stringify(children)}`,
    );
  });

  test('opens .cu files as cuda-cpp', () => {
    assert.strictEqual(matmul.languageId, 'cuda-cpp');
  });

  test('CodeLens on matmul_unroll.cu: benchmark, sweep and a loop summary', async () => {
    const lenses = await poll(
      'Unroll Lens CodeLens on matmul_unroll.cu',
      () => vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', matmul.uri, 100),
      l => lensTitles(l).some(t => t.includes('Benchmark this loop')),
    );
    const titles = lensTitles(lenses);
    assert.ok(
      titles.some(t => t.includes('Benchmark this loop')),
      `no "Benchmark this loop" lens in ${JSON.stringify(titles)}`,
    );
    assert.ok(
      titles.some(t => t.includes('Sweep unroll factors')),
      `no "Sweep unroll factors" lens in ${JSON.stringify(titles)}`,
    );
    const summaries = titles.filter(t => /trip count (runtime|\d+|dependent)/.test(t));
    assert.ok(summaries.length > 0, `no summary lens with a trip count in ${JSON.stringify(titles)}`);
    assert.ok(
      summaries.some(t => /(unroll \S+ requested|full unroll requested|unroll 1 \(disabled\)|no unroll pragma)/.test(t)),
      `no summary lens states the unroll request: ${JSON.stringify(summaries)}`,
    );
  });

  test('hover on a #pragma unroll and on a kernel loop mentions Unroll Lens and the trip count', async () => {
    const pragmaLine = findLine(matmul, /^\s*#\s*pragma\s+unroll\b/);
    assert.ok(pragmaLine >= 0, 'matmul_unroll.cu has no #pragma unroll line');
    const kernelLine = findLine(matmul, /__global__/);
    const forLine = findLine(matmul, /^\s*for\s*\(/, Math.max(kernelLine, 0));
    assert.ok(forLine >= 0, 'matmul_unroll.cu has no for loop after a __global__ kernel');
    const positions = [
      new vscode.Position(pragmaLine, matmul.lineAt(pragmaLine).text.indexOf('#') + 1),
      new vscode.Position(forLine, matmul.lineAt(forLine).text.indexOf('for') + 1),
    ];
    for (const pos of positions) {
      const text = hoverText(
        await poll(
          `an Unroll Lens hover at ${pos.line + 1}:${pos.character + 1} ("${matmul.lineAt(pos.line).text.trim()}")`,
          () => vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', matmul.uri, pos),
          h => /unroll lens/i.test(hoverText(h)),
        ),
      );
      assert.match(text, /unroll lens/i);
      assert.match(text, /trip count/i, `hover at line ${pos.line + 1} does not mention the trip count:\n${text}`);
    }
  });

  test('diagnostics: pragma without a loop, full unroll of a runtime trip count', async () => {
    const uri = vscode.Uri.joinPath(workspaceRoot(), `it-diagnostics-${process.pid}-${Date.now()}.cu`);
    const source =
      '__global__ void k(float* a, int n) {\n' +
      '#pragma unroll 4\n' +
      '  a[0] = 1;\n' +
      '#pragma unroll\n' +
      '  for (int i = 0; i < n; ++i) a[i] = 0;\n' +
      '}\n';
    await vscode.workspace.fs.writeFile(uri, Buffer.from(source, 'utf8'));
    try {
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc);
      const codeOf = (d: vscode.Diagnostic) => String(typeof d.code === 'object' ? d.code.value : d.code);
      const ours = (ds: vscode.Diagnostic[]) => ds.filter(d => d.source === 'unroll-lens');
      const diags = await poll(
        'unroll-lens diagnostics pragma-without-loop and full-unroll-runtime-trip',
        () => ours(vscode.languages.getDiagnostics(uri)),
        ds => ds.some(d => codeOf(d) === 'pragma-without-loop') && ds.some(d => codeOf(d) === 'full-unroll-runtime-trip'),
      );
      const summary = JSON.stringify(diags.map(d => ({ code: codeOf(d), line: d.range.start.line + 1, message: d.message })));
      assert.ok(
        diags.some(d => codeOf(d) === 'pragma-without-loop' && d.range.start.line === 1),
        `expected pragma-without-loop on line 2: ${summary}`,
      );
      assert.ok(
        diags.some(d => codeOf(d) === 'full-unroll-runtime-trip' && d.range.start.line === 3),
        `expected full-unroll-runtime-trip on line 4: ${summary}`,
      );
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      await vscode.workspace.fs.delete(uri, { useTrash: false });
    }
  });

  test('command benchmarkLoop runs without throwing (sweepKernel: sweep.test.ts)', async () => {
    await vscode.window.showTextDocument(matmul);
    const lenses = await poll(
      'CodeLens commands on matmul_unroll.cu',
      () => vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', matmul.uri, 100),
      l => lensTitles(l).some(t => t.includes('Benchmark this loop')),
    );
    const commandOf = (id: string) => lenses.find(l => l.command?.command === id)?.command;
    for (const id of ['unrollLens.benchmarkLoop']) {
      const cmd = commandOf(id);
      assert.ok(cmd, `no CodeLens invokes ${id}`);
      const result = await vscode.commands.executeCommand<{ error?: string } | undefined>(id, ...(cmd.arguments ?? []));
      // CI has nvcc but no GPU: the bench stops before building (issue 43) with an error that names
      // what is missing and what works without a GPU.
      if (id === 'unrollLens.benchmarkLoop' && result?.error)
        assert.match(result.error, /ncu \(Nsight Compute\) not found.*Install|CUPTI|GPU|driver/);
    }
  });

  test("SASS: building a loop's unroll variants fills the hover table and the CodeLens", async function () {
    this.timeout(240_000);
    await vscode.window.showTextDocument(matmul);
    const loopLine = findLine(matmul, /^\s*for \(int k = 0; k < n; \+\+k\)/);
    assert.ok(loopLine >= 0, 'matmul_basic k loop not found');
    const report = await vscode.commands.executeCommand<LoopVariantsResult | undefined>('unrollLens.sassVariants', {
      uri: matmul.uri.toString(),
      line: loopLine + 1,
    });
    assert.ok(report, 'the command returned no report (is nvcc on the PATH?)');
    const byFactor = new Map(report!.variants.map(v => [String(v.factor), v]));
    assert.equal(byFactor.get('1')?.effectiveUnroll, 1);
    assert.equal(byFactor.get('4')?.effectiveUnroll, 4);
    assert.equal(byFactor.get('default')?.effectiveUnroll, 16, 'nvcc unrolls a runtime-trip-count loop ×16 by default');
    const pos = new vscode.Position(loopLine, matmul.lineAt(loopLine).text.indexOf('for') + 1);
    const text = hoverText(
      await poll(
        'hover with the variants table',
        () => vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', matmul.uri, pos),
        h => /Unroll variants/.test(hoverText(h)),
      ),
    );
    assert.match(text, /\| factor \| kernel SASS \| bytes \| loop SASS \| regs \| spills \| stack · loop LDL\/STL \| nvcc unroll/);
    assert.match(text, /×16/);
    const lenses = await poll(
      'a SASS CodeLens with counts',
      () => vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', matmul.uri, 100),
      l => lensTitles(l).some(t => /^SASS \d+ instr · \d+ regs · nvcc unrolled ×16$/.test(t)),
      180_000,
    );
    assert.ok(lensTitles(lenses).some(t => t.startsWith('SASS ')));
  });
  test('macros from a project header: the kernels are found and hover names the header and the expansion', async () => {
    const doc = await openSample('project_macros/project_macros.cu');
    const line = findLine(doc, /^\s*PM_UNROLL\(4\)/) + 1;
    assert.ok(line > 0, 'PM_UNROLL(4) loop not found');
    const pos = new vscode.Position(line, doc.lineAt(line).text.indexOf('for') + 1);
    const text = hoverText(
      await poll(
        'hover naming pm_config.h',
        () => vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, pos),
        h => /pm_config\.h/.test(hoverText(h)),
      ),
    );
    assert.match(text, /`PM_UNROLL\(4\)` \(expands to `#pragma unroll 4`, pm_config\.h:\d+\)/);
    assert.match(text, /Macro expansion/);
    assert.match(text, /Qualified by \| `PM_KERNEL` → `__global__`/);
  });

  test('a loop in a header: variants are built through the translation unit of compile_commands.json', async function () {
    this.timeout(240_000);
    const doc = await openSample('header_loops/tile_ops.cuh');
    const loopLine = findLine(doc, /^\s*for \(int k = 0; k < n; \+\+k\) s \+= a\[k\] \* x\[k\];/);
    assert.ok(loopLine >= 0, 'row_dot loop not found');
    const report = await vscode.commands.executeCommand<LoopVariantsResult | undefined>('unrollLens.sassVariants', {
      uri: doc.uri.toString(),
      line: loopLine + 1,
    });
    assert.ok(report, 'the command returned no report (is nvcc on the PATH?)');
    const byFactor = new Map(report!.variants.map(v => [String(v.factor), v]));
    assert.equal(byFactor.get('1')?.effectiveUnroll, 1);
    assert.equal(byFactor.get('4')?.effectiveUnroll, 4);
  });
});
