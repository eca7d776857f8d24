// Sweeps inside a real VS Code: the kernel CodeLens runs a sweep of matmul_basic's loop on a
// stand-in GPU (test/fixtures/fake-gpu: ncu and a run launcher replaying H100 recordings, with
// the ×4 variant's durations scaled to 0.6 and ×1's to 1.8 so the best is known), the results
// panel opens with the result, the result is saved and re-opens, and Apply best — from the
// panel and from the loop's quick fix — edits the document, which Undo restores.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { CompareKernelsResult, SweepResult, SweepRunResult } from '../../../src/protocol';

const EXTENSION_ID = 'unroll-lens.unroll-lens';
const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

interface Api {
  panels: () => { title: string; result: SweepResult | null }[];
  applyVariant: (result: SweepResult, variantId: string, confirmed?: boolean) => Promise<boolean>;
  revealVariant: (result: SweepResult, variantId: string) => Promise<void>;
}

async function poll<T>(what: string, probe: () => Thenable<T> | T, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

suite('Sweeps and the results panel (extension host)', () => {
  const folder = () => vscode.workspace.workspaceFolders![0].uri;
  const repo = () => path.dirname(folder().fsPath);
  const config = () => vscode.workspace.getConfiguration('unrollLens');
  const GPU_SETTINGS: [string, unknown][] = [
    ['toolchain.ncuPath', ''],
    ['profile.launcher', []],
    ['profile.args', ['--only', 'matmul_basic', '--reps', '25']],
    ['profile.sourceStalls', false],
    ['profile.clockControl', 'none'],
    // the stand-in GPU replays ncu recordings: time with ncu (the CUPTI timer, the default, is tested in test/unit)
    ['profile.timer', 'ncu'],
  ];
  let doc: vscode.TextDocument;
  let api: Api;
  const saved: string[] = [];
  const started = Date.now() - 1000;

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    api = (await ext.activate()) as Api;
    doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder(), 'matmul_unroll.cu'));
    await vscode.window.showTextDocument(doc);
    const fake = path.join(repo(), 'test', 'fixtures', 'fake-gpu');
    const values: Record<string, unknown> = {
      'toolchain.ncuPath': path.join(fake, 'ncu'),
      'profile.launcher': [path.join(fake, 'launcher'), '--scale', '4=0.6,1=1.8'],
    };
    for (const [key, fallback] of GPU_SETTINGS) await config().update(key, values[key] ?? fallback, vscode.ConfigurationTarget.Global);
    await sleep(1500); // the server reads the new settings on didChangeConfiguration
  });

  suiteTeardown(async () => {
    for (const [key] of GPU_SETTINGS) await config().update(key, undefined, vscode.ConfigurationTarget.Global);
    for (const f of saved) fs.rmSync(f, { force: true });
    // Also what a failed run saved before it could report its path: nothing of the tests stays in cuda-samples/.
    const dir = path.join(folder().fsPath, '.unroll-lens', 'results');
    for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      if (fs.statSync(path.join(dir, f)).mtimeMs >= started) fs.rmSync(path.join(dir, f), { force: true });
    }
    for (const d of [dir, path.dirname(dir)]) if (fs.existsSync(d) && !fs.readdirSync(d).length) fs.rmdirSync(d);
  });

  let sweep: SweepRunResult;

  test('the kernel CodeLens sweeps on the (replayed) GPU and the panel opens with the result', async function () {
    this.timeout(300_000);
    const lenses = await poll(
      'the Sweep CodeLens of matmul_basic',
      () => vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri, 100),
      l => (l ?? []).some(x => x.command?.command === 'unrollLens.sweepKernel' && x.command.arguments?.[0]?.kernel === 'matmul_basic'),
    );
    const lens = lenses.find(x => x.command?.command === 'unrollLens.sweepKernel' && x.command.arguments?.[0]?.kernel === 'matmul_basic')!;
    const loopLine =
      doc
        .getText()
        .split('\n')
        .findIndex(l => /for \(int k = 0; k < n; \+\+k\)/.test(l)) + 1;
    // The CodeLens argument plus what the quick picks would ask (a test cannot click them).
    sweep = await vscode.commands.executeCommand<SweepRunResult>('unrollLens.sweepKernel', {
      ...lens.command!.arguments![0],
      loops: [loopLine],
      factors: ['default', '1', '4'],
      params: [],
      strategy: 'exhaustive',
    });
    assert.ok(sweep && !('error' in sweep), `sweep failed: ${JSON.stringify(sweep)}`);
    const r = sweep.result;
    assert.equal(r.static, false, `expected a GPU sweep: ${r.notes.join('; ')}`);
    assert.equal(r.complete, true);
    assert.deepEqual(
      r.variants.map(v => v.id),
      ['as-written', `${loopLine}=default`, `${loopLine}=1`, `${loopLine}=4`],
    );
    for (const v of r.variants) assert.equal(v.status, 'ok', `${v.id}: ${v.status} ${v.message}`);
    // The file as written has no pragma on this loop: "default" is the same machine code, measured once.
    assert.equal(r.variants[1].identicalTo, 'as-written');
    assert.equal(r.variants[1].medianMs, r.variants[0].medianMs);
    assert.equal(r.best, `${loopLine}=4`, 'the replayed ×4 is the fastest');
    assert.ok(Math.abs(r.variants[3].speedup! - 1 / 0.6) < 0.01, `speedup of ×4: ${r.variants[3].speedup}`);
    assert.ok(r.variants[0].stallShare && 'no_instruction' in r.variants[0].stallShare, 'stall reasons come from the recording');
    const panel = await poll(
      'the results panel',
      () => api.panels(),
      ps => ps.some(p => p.result?.kernel === 'matmul_basic' && p.result?.origin === 'sweep'),
    );
    const mine = panel.find(p => p.result?.origin === 'sweep')!;
    assert.match(mine.title, /matmul_basic · L\d+ · sweep/);
    assert.equal(mine.result!.best, r.best);
    assert.ok(sweep.savedPath && fs.existsSync(sweep.savedPath), `saved result missing: ${sweep.savedPath}`);
    saved.push(sweep.savedPath!);
    assert.match(path.relative(folder().fsPath, sweep.savedPath!), /^\.unroll-lens[\\/]results[\\/]matmul_basic-\d{8}-\d{6}(-\d+)?\.json$/);
  });

  test('Compare kernels in this file: the command runs the comparison through the server and opens the ladder', async function () {
    this.timeout(240_000);
    await vscode.window.showTextDocument(doc);
    // what the three prompts would ask, given: the stand-in GPU replays matmul_basic's launches
    const report = await vscode.commands.executeCommand<CompareKernelsResult | { error: string } | undefined>('unrollLens.compareKernels', {
      uri: doc.uri.toString(),
      kernels: ['matmul_basic'],
      baseline: 'matmul_basic',
      args: '--only matmul_basic --reps 25',
    });
    assert.ok(report && 'result' in report, `the comparison ran: ${JSON.stringify(report)}`);
    assert.equal(report.result.origin, 'compare');
    assert.deepEqual(
      report.kernels.map(k => k.label),
      ['matmul_basic'],
    );
    assert.ok(report.kernels[0].medianMs! > 0, 'timed from the replayed launches');
    assert.equal(report.baseline, 'matmul_basic');
    assert.equal(report.kernels[0].speedup, 1);
    assert.ok(report.savedPath, 'saved like a benchmark');
    saved.push(report.savedPath!);
    await poll(
      'the compare panel',
      () => api.panels(),
      ps => ps.some(p => p.title === 'matmul_unroll.cu · compare' && p.result?.origin === 'compare'),
    );
  });

  test("a kernel comparison's row goes to that kernel's definition", async () => {
    // the H100 reduction ladder as `compare` saved it (test/fixtures/sweep/compare), pointed at this checkout's sample
    const fixture = path.join(repo(), 'test', 'fixtures', 'sweep', 'compare', 'reduce_unroll.json');
    const result = {
      ...(JSON.parse(fs.readFileSync(fixture, 'utf8')) as SweepResult),
      file: path.join(folder().fsPath, 'reduce_unroll.cu'),
    };
    const text = fs.readFileSync(result.file, 'utf8').split('\n');
    for (const [kernel, name] of [
      ['_Z14reduce_unroll4PKiPij', 'reduce_unroll4'],
      ['_Z15reduce_completeILj256EEvPKiPij', 'reduce_complete'],
    ]) {
      await api.revealVariant(result, kernel);
      const editor = vscode.window.activeTextEditor!;
      assert.equal(path.basename(editor.document.uri.fsPath), 'reduce_unroll.cu');
      const line = editor.selection.active.line;
      assert.match(text[line], new RegExp(`\\b${name}\\(`), `${kernel}: line ${line + 1}: ${text[line]}`);
    }
  });

  test('a saved result re-opens in the panel', async () => {
    assert.ok(sweep?.savedPath, 'needs the sweep above');
    const loaded = await vscode.commands.executeCommand<SweepResult>('unrollLens.showResults', { path: sweep.savedPath });
    assert.equal(loaded.kernel, 'matmul_basic');
    assert.deepEqual(
      loaded.variants.map(v => v.id),
      sweep.result.variants.map(v => v.id),
    );
  });

  test('Apply best from the panel edits the document; Undo restores it', async () => {
    assert.ok(sweep?.result, 'needs the sweep above');
    const editor = await vscode.window.showTextDocument(doc);
    const before = doc.getText();
    assert.equal(await api.applyVariant(sweep.result, sweep.result.best!, true), true);
    const loopLine = sweep.result.loops[0].line;
    assert.match(doc.lineAt(loopLine - 1).text, /^\s*#pragma unroll 4$/, `line ${loopLine}: ${doc.lineAt(loopLine - 1).text}`);
    assert.ok(doc.isDirty, 'Apply edits the document; the user saves (or undoes) it');
    await vscode.window.showTextDocument(editor.document);
    await vscode.commands.executeCommand('undo');
    await poll(
      'Undo to restore the text',
      () => doc.getText(),
      t => t === before,
      10_000,
    );
  });

  test("the loop's quick fix applies the best factor of the last sweep; Undo restores it", async function () {
    this.timeout(120_000);
    assert.ok(sweep?.result, 'needs the sweep above');
    // The server keeps results per text: sweep again on the restored text (cached: builds and replay are quick).
    const again = await vscode.commands.executeCommand<SweepRunResult>('unrollLens.sweepKernel', {
      uri: doc.uri.toString(),
      line: sweep.result.kernelLine,
      kernel: 'matmul_basic',
      loops: [sweep.result.loops[0].line],
      factors: ['default', '1', '4'],
      params: [],
      strategy: 'exhaustive',
    });
    if (again.savedPath) saved.push(again.savedPath);
    const loopLine = sweep.result.loops[0].line;
    const before = doc.getText();
    const range = new vscode.Range(loopLine - 1, 4, loopLine - 1, 8);
    const actions = await poll(
      'an Apply quick fix on the loop',
      () => vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc.uri, range),
      a => (a ?? []).some(x => /^Apply ×4/.test(x.title)),
    );
    const fix = actions.find(x => /^Apply ×4/.test(x.title))!;
    assert.ok(fix.edit, 'the quick fix carries its edit');
    await vscode.window.showTextDocument(doc);
    assert.ok(await vscode.workspace.applyEdit(fix.edit!));
    assert.match(doc.lineAt(loopLine - 1).text, /#pragma unroll 4/);
    await vscode.commands.executeCommand('undo');
    await poll(
      'Undo to restore the text',
      () => doc.getText(),
      t => t === before,
      10_000,
    );
  });
});
