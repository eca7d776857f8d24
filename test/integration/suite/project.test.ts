// A project's loop benchmarked from the editor (issue 39): the CMake fixture
// (test/fixtures/projects/cmake-lib) configured with the real cmake, its header opened, the
// "Benchmark this loop" CodeLens (shown on a header once unrollLens.project.buildCommand and
// runCommand are set) run through the real language server: variants built by the project's
// command in a copy of the tree, run by its run command under a stand-in ncu that replays the
// H200's raw pages (test/fixtures/gpu/h200/project-rowlib), the tree byte-identical afterwards.
import * as assert from 'assert';
import { spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms));

async function poll<T>(what: string, probe: () => Thenable<T> | T, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      // .unroll-lens/: where the editor saves a finished benchmark (ours, beside the file outside a workspace)
      if (e.isDirectory()) {
        if (e.name !== '.unroll-lens') walk(p);
      } else out[path.relative(root, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(root);
  return out;
}

suite('A project benchmarked through its own build and run (extension host)', () => {
  const repo = () => path.dirname(vscode.workspace.workspaceFolders![0].uri.fsPath);
  const config = () => vscode.workspace.getConfiguration('unrollLens');
  let dir = '';
  let proj = '';
  const keys = [
    'project.buildCommand',
    'project.runCommand',
    'project.root',
    'compileCommands',
    'toolchain.ncuPath',
    'profile.launcher',
    'profile.timer',
    'profile.clockControl',
    'profile.sourceStalls',
    'unrollFactors',
  ];

  suiteSetup(async function () {
    this.timeout(120_000);
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-it-project-')));
    proj = path.join(dir, 'proj');
    fs.cpSync(path.join(repo(), 'test', 'fixtures', 'projects', 'cmake-lib'), proj, { recursive: true });
    const cfg = spawnSync('cmake', ['-S', proj, '-B', path.join(proj, 'build')], { encoding: 'utf8' });
    assert.equal(cfg.status, 0, `cmake: ${cfg.stdout}\n${cfg.stderr}`);
    const rec = path.join(repo(), 'test', 'fixtures', 'gpu', 'h200', 'project-rowlib');
    const ncu = path.join(dir, 'ncu');
    fs.writeFileSync(
      ncu,
      `#!${process.execPath}
const fs = require('fs');
const args = process.argv.slice(2);
if (args.includes('--version')) { console.log('NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 36398880)'); process.exit(0); }
fs.appendFileSync(${JSON.stringify(path.join(dir, 'calls.txt'))}, JSON.stringify({ cwd: process.cwd(), args }) + '\\n');
const rec = f => fs.readFileSync(${JSON.stringify(rec)} + '/' + f, 'utf8');
process.stdout.write(rec('rowapp.stdout'));
const k = args[args.indexOf('--kernel-name') + 1];
console.log('==PROF== Disconnected from process 1');
process.stdout.write(rec(k.includes('Li32ELi1E') ? 'rowdot.cuh-L20-as-written-1-0.raw.csv' : 'rowdot.cuh-L20-as-written-0-0.raw.csv'));
`,
      { mode: 0o755 },
    );
    fs.writeFileSync(path.join(dir, 'launch'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
    const values: Record<string, unknown> = {
      'project.buildCommand': 'cmake -S . -B build >/dev/null && cmake --build build',
      'project.runCommand': './build/rowapp 4096 25',
      'project.root': proj,
      compileCommands: path.join(proj, 'build', 'compile_commands.json'),
      'toolchain.ncuPath': ncu,
      'profile.launcher': [path.join(dir, 'launch')],
      'profile.timer': 'ncu',
      'profile.clockControl': 'none',
      'profile.sourceStalls': false,
      unrollFactors: ['4'],
    };
    for (const k of keys) await config().update(k, values[k], vscode.ConfigurationTarget.Global);
    await sleep(1500); // the server reads the new settings on didChangeConfiguration
  });

  suiteTeardown(async () => {
    for (const k of keys) await config().update(k, undefined, vscode.ConfigurationTarget.Global);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the header's Benchmark this loop lens builds, runs and times the variants in a copy; the tree is untouched", async function () {
    this.timeout(300_000);
    const before = snapshot(proj);
    const doc = await vscode.workspace.openTextDocument(path.join(proj, 'src', 'kernels', 'rowdot.cuh'));
    await vscode.window.showTextDocument(doc);
    const lenses = await poll(
      'the Benchmark this loop lens on rowdot.cuh',
      () => vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri, 100),
      l => (l ?? []).some(x => x.command?.command === 'unrollLens.benchmarkLoop' && x.command.arguments?.[0]?.line === 20),
    );
    const lens = lenses.find(x => x.command?.command === 'unrollLens.benchmarkLoop' && x.command.arguments?.[0]?.line === 20)!;
    const report = await vscode.commands.executeCommand<{
      error?: string;
      variants?: { label: string; status: string; medianMs: number | null; message: string | null }[];
      result?: { instantiations?: unknown; variants: { kernel: string | null; instantiations?: { kernel: string }[] }[] };
    }>('unrollLens.benchmarkLoop', ...lens.command!.arguments!);
    assert.ok(report && !report.error, `bench failed: ${JSON.stringify(report)}`);
    assert.deepEqual(
      report.variants!.map(v => [v.label, v.status]),
      [
        ['as-written', 'ok'],
        ['4', 'ok'],
      ],
      JSON.stringify(report.variants),
    );
    assert.deepEqual(
      report.result!.variants[0].instantiations!.map(x => x.kernel),
      ['_Z8rows_dotILi1ELi64EEvPKfPfi', '_Z8rows_dotILi32ELi1EEvPKfPfi'],
    );
    const calls = fs
      .readFileSync(path.join(dir, 'calls.txt'), 'utf8')
      .trim()
      .split('\n')
      .map(l => JSON.parse(l) as { cwd: string });
    assert.ok(
      calls.every(c => c.cwd.includes(`${path.sep}projects${path.sep}`) && !c.cwd.startsWith(proj)),
      'every run started in the copy',
    );
    assert.deepEqual(snapshot(proj), before, 'the source tree and its build folder are byte-identical');
  });
});
