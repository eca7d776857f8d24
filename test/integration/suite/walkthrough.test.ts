// The Get Started walkthrough and the toolchain's language status item inside a real VS Code
// (issue 27): each check button's command runs its check through the server and returns it
// (nvcc found on this machine; no ncu here, so its fix), the language status request answers
// with the toolchain, the item follows a change of the tool settings, and the sample opens from
// the extension's global storage (not the workspace) with "Benchmark this loop" above its loop.
import * as assert from 'assert';
import * as path from 'path';
import * as vscode from 'vscode';
import type { ToolCheckResult, ToolchainInfo } from '../../../src/protocol';

const EXTENSION_ID = 'unroll-lens.unroll-lens';
const CHECKS = ['nvcc', 'disassemblers', 'ncu', 'gpu'];
const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

interface Api {
  client: { sendRequest: (method: string, params: unknown) => Promise<unknown> };
  toolchainStatus: () => { text: string; detail: string; severity: string; busy: boolean } | null;
}

async function poll<T>(what: string, probe: () => Thenable<T> | T, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const start = Date.now();
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (ok(last)) return last;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await sleep(250);
  }
}

suite('Get Started walkthrough and toolchain status (extension host)', () => {
  let api: Api;
  const config = () => vscode.workspace.getConfiguration('unrollLens');

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    api = (await ext.activate()) as Api;
  });

  suiteTeardown(async () => {
    await config().update('toolchain.ncuPath', undefined, vscode.ConfigurationTarget.Global);
  });

  test('each check button runs its check through the server and returns the result', async () => {
    const results: Record<string, ToolCheckResult> = {};
    for (const id of CHECKS) {
      const r = await vscode.commands.executeCommand<ToolCheckResult>('unrollLens.checkTool', id);
      assert.equal(r?.id, id, `checkTool ${id} returned ${JSON.stringify(r)}`);
      results[id] = r;
    }
    const nvcc = results.nvcc;
    assert.equal(nvcc.found, true, `nvcc is on this machine: ${nvcc.message}`);
    assert.match(nvcc.message, /^nvcc \d+\.\d+ at \/\S+nvcc \(/);
    assert.ok(nvcc.tools[0].path && nvcc.tools[0].version, JSON.stringify(nvcc.tools));
    // no Nsight Compute here: not found, optional with the default CUPTI timer, and how to get it
    assert.equal(results.ncu.found, false, results.ncu.message);
    assert.equal(results.ncu.severity, 'info');
    assert.match(results.ncu.fix ?? '', /Install NVIDIA Nsight Compute.*unrollLens\.toolchain\.ncuPath/);
    // no GPU here: said, with what works without one
    assert.equal(results.gpu.found, false, results.gpu.message);
    assert.match(results.gpu.message, /no GPU/);
    assert.match(results.gpu.fix ?? '', /unrollLens\.profile\.launcher/);
    const d = results.disassemblers;
    assert.ok(d.found ? d.tools.every(t => t.path) : d.fix, JSON.stringify(d));
    // the argument a markdown link passes, and an object, are both accepted; a wrong one is refused
    assert.equal((await vscode.commands.executeCommand<ToolCheckResult>('unrollLens.checkTool', { tool: 'ncu' })).id, 'ncu');
    const bad = await vscode.commands.executeCommand<{ error: string }>('unrollLens.checkTool', 'cmake');
    assert.match(bad.error, /unknown check "cmake"/);
    // no argument: every check
    const all = await vscode.commands.executeCommand<ToolchainInfo>('unrollLens.checkTool');
    assert.deepEqual(
      all.checks.map(c => c.id),
      CHECKS,
    );
  });

  test('the language status request answers with the toolchain, and the item shows it', async () => {
    const info = (await api.client.sendRequest('unrollLens/toolchainInfo', {})) as ToolchainInfo;
    assert.equal(info.trusted, true);
    assert.match(info.text, /^nvcc \d+\.\d+ · sm_\d+ · no GPU$/);
    assert.match(info.detail, /ncu missing · no GPU$/);
    assert.equal(info.severity, 'information', JSON.stringify(info.checks));
    assert.match(info.checks.find(c => c.id === 'ncu')!.fix ?? '', /Nsight Compute/);
    const shown = await poll(
      'the language status item',
      () => api.toolchainStatus(),
      s => s !== null && !s.busy,
    );
    assert.deepEqual([shown!.text, shown!.detail, shown!.severity], [info.text, info.detail, info.severity]);
  });

  test('the item follows a change of the tool settings (an ncu path)', async function () {
    this.timeout(60_000);
    const fake = path.join(path.dirname(vscode.workspace.workspaceFolders![0].uri.fsPath), 'test', 'fixtures', 'fake-gpu', 'ncu');
    await config().update('toolchain.ncuPath', fake, vscode.ConfigurationTarget.Global);
    await poll(
      'ncu in the language status detail',
      () => api.toolchainStatus(),
      s => /ncu 2025\.3\.1/.test(s?.detail ?? ''),
    );
    await config().update('toolchain.ncuPath', undefined, vscode.ConfigurationTarget.Global);
    await poll(
      'ncu missing again',
      () => api.toolchainStatus(),
      s => /ncu missing/.test(s?.detail ?? ''),
    );
  });

  test('Get Started opens the walkthrough; the sample opens from global storage with its benchmark lens', async function () {
    this.timeout(60_000);
    assert.equal(await vscode.commands.executeCommand('unrollLens.openWalkthrough'), true);
    const opened = await vscode.commands.executeCommand<string>('unrollLens.openSample');
    assert.equal(typeof opened, 'string', JSON.stringify(opened));
    const uri = vscode.Uri.parse(opened);
    assert.match(uri.fsPath, /[\\/]samples[\\/]first_benchmark\.cu$/);
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    assert.ok(!uri.fsPath.startsWith(folder + path.sep), `the sample must not be written into the workspace: ${uri.fsPath}`);
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), uri.toString());
    const lenses = await poll(
      'Benchmark this loop on the sample',
      () => vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 100),
      l => (l ?? []).some(x => x.command?.title === 'Benchmark this loop'),
    );
    const bench = lenses.find(x => x.command?.title === 'Benchmark this loop')!;
    assert.equal(bench.command!.command, 'unrollLens.benchmarkLoop');
    const doc = vscode.window.activeTextEditor!.document;
    assert.match(doc.lineAt(bench.range.start.line).text, /for \(int t = 0; t < taps; \+\+t\)/);
    // opening it again reuses the copy (it may hold the user's edits)
    assert.equal(await vscode.commands.executeCommand<string>('unrollLens.openSample'), opened);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
