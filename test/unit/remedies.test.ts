// Issue 27: a message's fix in the words of where the user is. On the command line the engine's
// messages name what works in a shell (CUDA_HOME, PATH, NVCC_CCBIN, the CLI's flags), never an
// editor setting; in the editor (the language server installs EDITOR_REMEDIES) they keep naming
// the settings.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT, SAMPLES } from './helpers';
import { COMMAND_LINE_REMEDIES, LocatedTool, remedies, Remedies, useRemedies } from '../../src/engine/base/remedies';
import { EDITOR_REMEDIES } from '../../src/server/remedies';
import { findOptionalTool, findTool, MissingToolError } from '../../src/engine/toolchain/discover';
import { flagsFromCompileCommands } from '../../src/engine/toolchain/flags';
import { VariantInspector } from '../../src/engine/variants/inspect';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { VariantBuilder } from '../../src/engine/variants/build';
import { benchCommand } from '../../src/cli/bench';
import { compareCommand } from '../../src/cli/compare';

const TOOLS: LocatedTool[] = ['nvcc', 'cuobjdump', 'nvdisasm', 'ncu'];
const COMPILE_DB = path.join(REPO_ROOT, 'test', 'fixtures', 'nvcc', 'compile_commands', 'make.json');
const SETTING_KEY = /unrollLens(\.[A-Za-z]+)+/;
const SETTING_KEYS = new RegExp(SETTING_KEY.source, 'g');

/** The messages a user reads when a tool is missing or cannot help, under the words installed now. */
function messages(): { tool: Record<LocatedTool, string>; nvdisasmMissing: string; nvdisasmTooOld: string; ccbin: string } {
  const tool = Object.fromEntries(TOOLS.map(t => [t, new MissingToolError(t, ['/nowhere']).message])) as Record<LocatedTool, string>;
  const inspector = (nvdisasm: unknown) =>
    new VariantInspector({ toolchain: { nvdisasm } as unknown as Toolchain, builder: {} as VariantBuilder, arch: 'sm_100' });
  const flags = flagsFromCompileCommands(COMPILE_DB, '/proj/samples/vecadd/vecadd.cu')!;
  return {
    tool,
    nvdisasmMissing: inspector(null).limitation('elf')!,
    nvdisasmTooOld: inspector({ path: '/opt/cuda-12.4/bin/nvdisasm', version: '12.4' }).limitation(
      'elf',
      "nvdisasm fatal   : Cannot decode architecture 'SM100'",
    )!,
    ccbin: flags.warnings.find(w => /-ccbin/.test(w))!,
  };
}

afterEach(() => useRemedies(COMMAND_LINE_REMEDIES));

describe('the command line: what works in a shell', () => {
  test('the engine speaks the command line unless told otherwise', () => {
    assert.equal(remedies(), COMMAND_LINE_REMEDIES);
  });

  test('a missing tool, an nvdisasm too old, a -ccbin from compile_commands.json: no editor setting, the environment instead', () => {
    const m = messages();
    for (const t of TOOLS) {
      assert.match(m.tool[t], new RegExp(`^${t === 'ncu' ? 'ncu \\(Nsight Compute\\)' : t} not found \\(looked in: /nowhere\\)\\. `));
      assert.doesNotMatch(m.tool[t], SETTING_KEY, m.tool[t]);
      assert.match(m.tool[t], /on PATH/);
    }
    assert.match(m.tool.nvcc, /set CUDA_HOME to its folder or put its bin\/ on PATH\.$/);
    assert.match(m.tool.ncu, /put the folder holding ncu on PATH/);
    assert.match(m.nvdisasmMissing, /^nvdisasm not found: .*set CUDA_HOME to the toolkit's folder or put its bin\/ on PATH/);
    assert.match(m.nvdisasmTooOld, /cannot read sm_100 code .*Set CUDA_HOME to a CUDA Toolkit that knows this architecture/);
    assert.match(m.ccbin, /the host compiler is never taken from compile_commands\.json \(set NVCC_CCBIN to choose one: nvcc reads it\)/);
    for (const text of [m.nvdisasmMissing, m.nvdisasmTooOld, m.ccbin]) assert.doesNotMatch(text, SETTING_KEY, text);
  });

  test('what the words name works there: discovery reads CUDA_HOME and PATH, and the CLI has the flags they name', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-remedies-'));
    for (const sub of ['home/bin', 'path']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
    const fake = (p: string) =>
      fs.writeFileSync(p, '#!/bin/sh\necho "NVIDIA (R) Nsight Compute Command Line Profiler Version 2025.3.1"\n', { mode: 0o755 });
    fake(path.join(dir, 'home', 'bin', 'ncu'));
    fake(path.join(dir, 'path', 'ncu'));
    const home = await findTool('ncu', { env: { CUDA_HOME: path.join(dir, 'home') }, standardLocations: false });
    assert.deepEqual([home.path, home.source], [path.join(dir, 'home', 'bin', 'ncu'), 'CUDA_HOME']);
    const onPath = await findTool('ncu', { env: { PATH: path.join(dir, 'path') }, standardLocations: false });
    assert.deepEqual([onPath.path, onPath.source], [path.join(dir, 'path', 'ncu'), 'PATH']);
    // "(CUDA_HOME and CUDA_PATH are searched before PATH)"
    const both = await findTool('ncu', {
      env: { CUDA_HOME: path.join(dir, 'home'), PATH: path.join(dir, 'path') },
      standardLocations: false,
    });
    assert.equal(both.source, 'CUDA_HOME');
    // every --flag the command-line words name is an option of the commands that print them (bench, compare)
    const flags = JSON.stringify(COMMAND_LINE_REMEDIES).match(/--[a-z-]+/g) ?? [];
    assert.ok(flags.length > 0);
    for (const f of flags)
      for (const c of [benchCommand, compareCommand]) assert.ok(f.slice(2) in c.options, `${f} is not an option of unroll-lens ${c.name}`);
  });

  test('unroll-lens bench --timer ncu without ncu: exit 2 and the shell words', async t => {
    if (await findOptionalTool('ncu')) return t.skip('ncu is installed here');
    if (!(await findOptionalTool('nvcc'))) return t.skip('no nvcc');
    const r = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'bin', 'unroll-lens.js'), 'bench', path.join(SAMPLES, 'matvec.cu'), '--loop', '70', '--timer', 'ncu'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /ncu \(Nsight Compute\) not found\. Install NVIDIA Nsight Compute .* put the folder holding ncu on PATH/);
    assert.doesNotMatch(r.stderr, SETTING_KEY);
  });
});

describe('the editor: its settings', () => {
  test('the same messages name the settings once the server installs the editor words', () => {
    useRemedies(EDITOR_REMEDIES);
    const m = messages();
    assert.match(m.tool.ncu, /, or set unrollLens\.toolchain\.ncuPath\.$/);
    assert.match(m.tool.nvcc, /or set unrollLens\.toolchain\.cudaHome \/ nvccPath\.$/);
    assert.match(m.tool.cuobjdump, /or set unrollLens\.toolchain\.cuobjdumpPath\.$/);
    assert.match(m.tool.nvdisasm, /or set unrollLens\.toolchain\.nvdisasmPath\.$/);
    assert.match(m.nvdisasmMissing, /or set unrollLens\.toolchain\.nvdisasmPath\.$/);
    assert.match(m.nvdisasmTooOld, /first on PATH, or set unrollLens\.toolchain\.nvdisasmPath\.$/);
    assert.match(m.ccbin, /\(set unrollLens\.nvccArgs to choose one\)/);
  });

  test('every setting the editor words name exists, and the server installs them before it serves', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, unknown> } };
    };
    const keys = new Set(Object.keys(pkg.contributes.configuration.properties));
    const named = JSON.stringify(EDITOR_REMEDIES satisfies Remedies).match(SETTING_KEYS) ?? [];
    assert.ok(named.length >= 6, named.join(', '));
    for (const k of named) assert.ok(keys.has(k), `${k} is not a setting of package.json`);
    const main = fs.readFileSync(path.join(REPO_ROOT, 'src', 'server', 'main.ts'), 'utf8');
    const installed = main.indexOf('useRemedies(EDITOR_REMEDIES);');
    assert.ok(installed > 0 && installed < main.indexOf('createServerConnection()'), 'src/server/main.ts installs EDITOR_REMEDIES first');
  });
});
