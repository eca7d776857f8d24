import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SETTINGS, readSettings, SETTING_ENTRIES, Settings } from '../../src/settings';
import * as protocol from '../../src/protocol';
import { runConfigFromSettings } from '../../src/server/runOptions';

function read(raw: unknown): { settings: Settings; warnings: string[] } {
  const warnings: string[] = [];
  const settings = readSettings(raw, w => warnings.push(w));
  return { settings, warnings };
}

describe('settings declaration', () => {
  test('DEFAULT_SETTINGS keeps the shape and values the server, features and CLI were written against', () => {
    assert.deepEqual(DEFAULT_SETTINGS, {
      bloatThresholdStatements: 2048,
      codeLensEnabled: true,
      compileCommands: '',
      arch: '',
      extraArchs: [],
      nvccArgs: [],
      includePaths: [],
      defines: [],
      unrollFactors: ['default', '1', '2', '4', '8', '16', 'full'],
      icacheBudgetBytes: 0,
      warpsPerSm: 0,
      buildOnSave: true,
      jobs: 0,
      cache: { maxSizeGB: 4 },
      toolchain: {
        cudaHome: '',
        nvccPath: '',
        cuobjdumpPath: '',
        nvdisasmPath: '',
        ncuPath: '',
        nvccTimeoutSeconds: 300,
        disassemblerTimeoutSeconds: 120,
      },
      project: { buildCommand: '', runCommand: '', checkCommand: '', root: '', buildCopies: 1, buildTimeoutSeconds: 3600 },
      profile: {
        args: [],
        samples: 20,
        maxSamples: 0,
        warmup: 2,
        clockControl: 'base',
        cacheControl: 'all',
        timer: 'cupti',
        stalls: 'on',
        counters: 'off',
        timeoutSeconds: 120,
        launcher: [],
        runCommand: [],
        compileCommand: [],
        checkCommand: [],
        sourceStalls: true,
        gpus: '',
        sharedDirectory: '',
        profilesPerGpu: 2,
        slurm: {
          enabled: false,
          taskCommand: [],
          partition: '',
          account: '',
          time: '',
          gpusPerTask: 1,
          pointsPerTask: 1,
          arrayMax: 0,
          extraArgs: [],
          pollSeconds: 10,
        },
        measurementCache: true,
      },
    });
    assert.equal(protocol.DEFAULT_SETTINGS, DEFAULT_SETTINGS, 'protocol.ts re-exports the one declaration');
  });

  test('keys: bloatThresholdStatements is the real setting; codeLens.enabled maps to codeLensEnabled; 57 settings', () => {
    const keys = SETTING_ENTRIES.map(e => e.key);
    assert.ok(keys.includes('unrollLens.bloatThresholdStatements'));
    assert.ok(!keys.includes('unrollLens.bloatThresholdInstructions'));
    assert.deepEqual(SETTING_ENTRIES.find(e => e.key === 'unrollLens.codeLens.enabled')?.field, ['codeLensEnabled']);
    assert.equal(SETTING_ENTRIES.find(e => e.key === 'unrollLens.trace.server')?.field, null, 'read by the language client only');
    assert.equal(keys.length, 57);
    assert.equal(new Set(keys).size, keys.length);
  });

  test('restricted = names a program, a command or compiler input; tool paths are machine-overridable', () => {
    const restricted = SETTING_ENTRIES.filter(e => e.decl.restricted)
      .map(e => e.key.replace('unrollLens.', ''))
      .sort();
    assert.deepEqual(restricted, [
      // issue 39: the compile database to read (its flags reach nvcc)
      'compileCommands',
      'defines',
      'extraArchs',
      'includePaths',
      'nvccArgs',
      'profile.args',
      'profile.checkCommand',
      'profile.compileCommand',
      'profile.launcher',
      'profile.runCommand',
      'profile.sharedDirectory',
      // Slurm sweeps (issue 28): turning them on runs sbatch; the others name what it submits and what the nodes run
      'profile.slurm.account',
      'profile.slurm.enabled',
      'profile.slurm.extraArgs',
      'profile.slurm.partition',
      'profile.slurm.taskCommand',
      // issue 39: a project's build, run and check are shell commands; its root is what they read and write in a copy of
      'project.buildCommand',
      'project.checkCommand',
      'project.root',
      'project.runCommand',
      'toolchain.cudaHome',
      'toolchain.cuobjdumpPath',
      'toolchain.ncuPath',
      'toolchain.nvccPath',
      'toolchain.nvdisasmPath',
    ]);
    for (const e of SETTING_ENTRIES) {
      assert.equal(e.decl.scope ?? 'window', e.key.includes('.toolchain.') ? 'machine-overridable' : 'window', e.key);
    }
  });

  test('every default passes its own validation', () => {
    const { warnings } = read(Object.fromEntries(SETTING_ENTRIES.map(e => [e.key.replace('unrollLens.', ''), e.decl.default])));
    assert.deepEqual(warnings, []);
  });
});

describe('readSettings', () => {
  test('nothing configured (undefined, null, {}): the defaults, no warnings, fresh arrays', () => {
    for (const raw of [undefined, null, {}]) {
      const r = read(raw);
      assert.deepEqual(r.settings, DEFAULT_SETTINGS);
      assert.deepEqual(r.warnings, []);
    }
    const s = readSettings({});
    s.unrollFactors.push('32');
    s.profile.launcher.push('srun');
    assert.deepEqual(DEFAULT_SETTINGS.unrollFactors, ['default', '1', '2', '4', '8', '16', 'full']);
    assert.deepEqual(DEFAULT_SETTINGS.profile.launcher, []);
  });

  test("VS Code's nested answer maps onto the Settings shape", () => {
    const r = read({
      bloatThresholdStatements: 100,
      codeLens: { enabled: false },
      trace: { server: 'verbose' },
      arch: 'sm_80',
      nvccArgs: ['-O3', '--use_fast_math'],
      unrollFactors: ['1', '4', 'full'],
      icacheBudgetBytes: 65536,
      jobs: 3,
      toolchain: { nvccPath: '/opt/cuda/bin/nvcc', cudaHome: '' },
      profile: { samples: 40, clockControl: 'none', timeoutSeconds: 2.5, launcher: ['srun', '-p', 'gpu'], sourceStalls: false },
    });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.settings.bloatThresholdStatements, 100);
    assert.equal(r.settings.codeLensEnabled, false);
    assert.equal(r.settings.arch, 'sm_80');
    assert.deepEqual(r.settings.nvccArgs, ['-O3', '--use_fast_math']);
    assert.deepEqual(r.settings.unrollFactors, ['1', '4', 'full']);
    assert.equal(r.settings.icacheBudgetBytes, 65536);
    assert.equal(r.settings.jobs, 3);
    assert.deepEqual(r.settings.toolchain, { ...DEFAULT_SETTINGS.toolchain, nvccPath: '/opt/cuda/bin/nvcc' });
    assert.deepEqual(r.settings.profile, {
      ...DEFAULT_SETTINGS.profile,
      samples: 40,
      clockControl: 'none',
      timeoutSeconds: 2.5,
      launcher: ['srun', '-p', 'gpu'],
      sourceStalls: false,
    });
  });

  test('dotted keys written flat are read too', () => {
    const r = read({ 'codeLens.enabled': false, 'profile.samples': 30 });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.settings.codeLensEnabled, false);
    assert.equal(r.settings.profile.samples, 30);
  });

  test('0 keeps its meaning: jobs 0 = cores, icacheBudgetBytes 0 = calibrated budget, warmup 0 = none skipped', () => {
    const r = read({ jobs: 0, icacheBudgetBytes: 0, profile: { warmup: 0 } });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.settings.jobs, 0);
    assert.equal(r.settings.icacheBudgetBytes, 0);
    assert.equal(r.settings.profile.warmup, 0);
  });

  // Each invalid value: the default comes back and one warning names the setting.
  const invalid: [string, unknown, (s: Settings) => unknown, RegExp][] = [
    [
      'profile.timeoutSeconds',
      0,
      s => s.profile.timeoutSeconds,
      /unrollLens\.profile\.timeoutSeconds: expected a number from 1 to 86400, got 0; using the default 120/,
    ],
    ['icacheBudgetBytes', -1, s => s.icacheBudgetBytes, /unrollLens\.icacheBudgetBytes: expected an integer ≥ 0, got -1/],
    [
      'toolchain.nvccTimeoutSeconds',
      0,
      s => s.toolchain.nvccTimeoutSeconds,
      /unrollLens\.toolchain\.nvccTimeoutSeconds: expected a number from 1 to 86400, got 0; using the default 300/,
    ],
    [
      'toolchain.disassemblerTimeoutSeconds',
      86_401,
      s => s.toolchain.disassemblerTimeoutSeconds,
      /unrollLens\.toolchain\.disassemblerTimeoutSeconds: expected a number from 1 to 86400, got 86401; using the default 120/,
    ],
    [
      'profile.samples',
      0,
      s => s.profile.samples,
      /unrollLens\.profile\.samples: expected an integer from 1 to 1000, got 0; using the default 20/,
    ],
    ['profile.samples', 2.5, s => s.profile.samples, /unrollLens\.profile\.samples: expected an integer from 1 to 1000, got 2\.5/],
    ['profile.samples', '20', s => s.profile.samples, /unrollLens\.profile\.samples: expected an integer from 1 to 1000, got "20"/],
    ['jobs', -2, s => s.jobs, /unrollLens\.jobs/],
    ['jobs', Number.NaN, s => s.jobs, /unrollLens\.jobs/],
    ['bloatThresholdStatements', 0, s => s.bloatThresholdStatements, /unrollLens\.bloatThresholdStatements: expected an integer ≥ 1/],
    ['codeLens.enabled', 'yes', s => s.codeLensEnabled, /unrollLens\.codeLens\.enabled: expected true or false, got "yes"/],
    [
      'profile.clockControl',
      'locked',
      s => s.profile.clockControl,
      /unrollLens\.profile\.clockControl: expected base or none, got "locked"; using the default "base"/,
    ],
    ['arch', 'compute_90', s => s.arch, /unrollLens\.arch: expected an sm_XX architecture such as sm_90, or empty/],
    ['arch', 90, s => s.arch, /unrollLens\.arch/],
    [
      'extraArchs',
      ['sm_80', 'compute_90'],
      s => s.extraArchs,
      /unrollLens\.extraArchs: .*\("compute_90" is not an sm_XX architecture such as sm_80\)/,
    ],
    ['extraArchs', 'sm_80', s => s.extraArchs, /unrollLens\.extraArchs: expected an array of strings/],
    ['nvccArgs', '-O3', s => s.nvccArgs, /unrollLens\.nvccArgs: expected an array of strings, got "-O3"/],
    ['nvccArgs', ['-O3', 3], s => s.nvccArgs, /unrollLens\.nvccArgs: .*\(3 is not a string\)/],
    ['profile.samples', 100000, s => s.profile.samples, /unrollLens\.profile\.samples: expected an integer from 1 to 1000, got 100000/],
    ['jobs', 1000, s => s.jobs, /unrollLens\.jobs: expected an integer from 0 to 64, got 1000/],
    ['unrollFactors', 'full', s => s.unrollFactors, /unrollLens\.unrollFactors: expected an array of strings/],
    ['unrollFactors', [], s => s.unrollFactors, /unrollLens\.unrollFactors: expected .*at least 1, got \[\]/],
    ['toolchain.nvccPath', ['/usr/bin/nvcc'], s => s.toolchain.nvccPath, /unrollLens\.toolchain\.nvccPath: expected a string/],
  ];
  for (const [key, value, get, message] of invalid) {
    test(`invalid ${key} = ${JSON.stringify(value) ?? String(value)}: default and a warning naming it`, () => {
      const raw: Record<string, unknown> = {};
      const parts = key.split('.');
      let node = raw;
      for (const p of parts.slice(0, -1)) node = (node[p] = {}) as Record<string, unknown>;
      node[parts[parts.length - 1]] = value;
      const r = read(raw);
      assert.equal(r.warnings.length, 1, r.warnings.join('\n'));
      assert.match(r.warnings[0], message);
      assert.deepEqual(get(r.settings), get(DEFAULT_SETTINGS));
    });
  }

  test('one bad value does not discard the good ones next to it', () => {
    const r = read({ profile: { samples: -1, warmup: 5 }, jobs: 4 });
    assert.equal(r.warnings.length, 1);
    assert.equal(r.settings.profile.samples, 20);
    assert.equal(r.settings.profile.warmup, 5);
    assert.equal(r.settings.jobs, 4);
  });

  test('unrollFactors: an invalid entry (1e23, a 24-digit integer, 0, x4, a number) is dropped with a warning; the valid ones are kept', () => {
    const r = read({ unrollFactors: ['1', '1e23', '100000000000000000000000', '0', 'x4', 4, '4096', '4097', 'full'] });
    assert.deepEqual(r.settings.unrollFactors, ['1', '4096', 'full']);
    assert.equal(r.warnings.length, 6, r.warnings.join('\n'));
    for (const w of r.warnings)
      assert.match(w, /^unrollLens\.unrollFactors: .* is not default, full or an integer from 1 to 4096; dropped$/);
    assert.match(r.warnings.join('\n'), /"1e23" is not/);
  });

  test('unrollFactors: every entry invalid: each is named, then the default list', () => {
    const r = read({ unrollFactors: ['0'] });
    assert.deepEqual(r.settings.unrollFactors, DEFAULT_SETTINGS.unrollFactors);
    assert.equal(r.warnings.length, 2, r.warnings.join('\n'));
    assert.match(r.warnings[0], /"0" is not default, full or an integer from 1 to 4096; dropped/);
    assert.match(r.warnings[1], /at least 1, got \[\]; using the default/);
  });

  test('the never-read bloatThresholdInstructions and unknown keys are named, not applied', () => {
    const r = read({ bloatThresholdInstructions: 4096, profile: { sampels: 30 }, toolchain: 'x' });
    assert.equal(r.settings.bloatThresholdStatements, 2048);
    assert.deepEqual(r.warnings.sort(), [
      'unrollLens.bloatThresholdInstructions is not read (it never took effect); set unrollLens.bloatThresholdStatements instead',
      'unrollLens.profile.sampels is not an Unroll Lens setting; ignored',
      'unrollLens.toolchain: expected an object of settings, got "x"; ignored',
    ]);
  });

  test('a configuration object with accessor functions (vscode.WorkspaceConfiguration) reads like plain JSON', () => {
    const r = read({ get: () => undefined, has: () => false, jobs: 2 });
    assert.deepEqual(r.warnings, []);
    assert.equal(r.settings.jobs, 2);
  });

  test('not an object: defaults and one warning', () => {
    const r = read('jobs=4');
    assert.deepEqual(r.settings, DEFAULT_SETTINGS);
    assert.equal(r.warnings.length, 1);
  });
});

test('the profile settings map onto the run options once, for the bench and the sweep alike', () => {
  const runOptionsFromSettings = (p: typeof DEFAULT_SETTINGS.profile) => runConfigFromSettings(p, { cacheDir: '/c', gpusHere: 1 }).config;
  const d = runOptionsFromSettings(DEFAULT_SETTINGS.profile);
  assert.equal(d.timeoutMs, DEFAULT_SETTINGS.profile.timeoutSeconds * 1000);
  assert.equal(d.runCommand, undefined, 'an empty template is "not set"');
  assert.equal(d.compileCommand, undefined);
  assert.equal(d.checkCommand, undefined);
  const custom = runOptionsFromSettings({
    ...DEFAULT_SETTINGS.profile,
    runCommand: ['{program}', '{args}'],
    launcher: ['srun'],
    samples: 30,
  });
  assert.deepEqual(custom.runCommand, ['{program}', '{args}']);
  assert.deepEqual(custom.launcher, ['srun']);
  assert.equal(custom.samples, 30);
});
