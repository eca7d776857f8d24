// package.json and docs/settings.md are generated from
// src/settings.ts; this fails when a file was edited by hand or the declaration changed without
// `npm run gen:settings` (rust-analyzer checks its package.json against its config the same way).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import {
  configurationContribution,
  generatePackageJson,
  settingsMarkdown,
  untrustedWorkspacesCapability,
} from '../../src/settingsManifest';
import { DEFAULT_SETTINGS, SETTING_ENTRIES } from '../../src/settings';
import { REPO_ROOT } from './helpers';

const FIX = 'run `npm run gen:settings` and commit the result (edit settings in src/settings.ts, not in the generated files)';
const read = (rel: string) => fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8');

describe('generated settings files are up to date with src/settings.ts', () => {
  const pkgText = read('package.json');
  const pkg = JSON.parse(pkgText);

  test('package.json contributes.configuration', () => {
    assert.deepEqual(pkg.contributes.configuration, configurationContribution(), `package.json contributes.configuration differs: ${FIX}`);
  });

  test('package.json capabilities.untrustedWorkspaces lists every restricted setting', () => {
    assert.deepEqual(pkg.capabilities?.untrustedWorkspaces, untrustedWorkspacesCapability(), `package.json capabilities differ: ${FIX}`);
    const restricted = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations as string[];
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
    for (const key of restricted) assert.ok(key in pkg.contributes.configuration.properties, `${key} is restricted but not contributed`);
  });

  test('package.json as a whole is what the generator writes (formatting included)', () => {
    assert.equal(generatePackageJson(pkgText), pkgText, `package.json differs: ${FIX}`);
  });

  test('docs/settings.md', () => {
    assert.equal(read('docs/settings.md'), settingsMarkdown(), `docs/settings.md differs: ${FIX}`);
  });
});

describe('settings generator', () => {
  test('every setting is contributed with its default, and the schema default matches DEFAULT_SETTINGS', () => {
    const props = configurationContribution().properties as Record<string, { default: unknown; scope: string; type: string }>;
    assert.deepEqual(
      Object.keys(props),
      SETTING_ENTRIES.map(e => e.key),
    );
    assert.equal(props['unrollLens.bloatThresholdStatements'].default, DEFAULT_SETTINGS.bloatThresholdStatements);
    assert.equal(props['unrollLens.bloatThresholdStatements'].type, 'integer');
    assert.equal(props['unrollLens.toolchain.nvccPath'].scope, 'machine-overridable');
    assert.equal(props['unrollLens.jobs'].scope, 'window');
    assert.deepEqual(props['unrollLens.profile.clockControl'], {
      type: 'string',
      enum: ['base', 'none'],
      enumDescriptions: [
        "Lock the GPU to base clocks while profiling (stable comparisons; ncu's default).",
        'Measure at whatever clocks the GPU runs.',
      ],
      default: 'base',
      scope: 'window',
      description:
        'ncu --clock-control: base locks the GPU to base clocks during profiling for stable comparisons; ' +
        'none measures at whatever clocks the GPU runs. The CUPTI timer (timer: cupti) never locks them.',
    });
    assert.deepEqual(props['unrollLens.profile.cacheControl'], {
      type: 'string',
      enum: ['all', 'none'],
      enumDescriptions: [
        "Flush every GPU cache before each profiled launch: each launch starts cold (ncu's default).",
        'Leave the caches as the previous launch left them (warm), as a program that launches the kernel repeatedly runs.',
      ],
      default: 'all',
      scope: 'window',
      description:
        'ncu --cache-control: all flushes every GPU cache before each profiled launch; none leaves them warm. ' +
        'The CUPTI timer (timer: cupti) never flushes: caches are as the program leaves them.',
    });
  });

  test('generatePackageJson keeps the other fields in order and adds capabilities before contributes', () => {
    const text = JSON.stringify({ name: 'x', contributes: { commands: [{ command: 'a' }] }, scripts: { b: 'c' } }, null, 2) + '\n';
    const out = JSON.parse(generatePackageJson(text));
    assert.deepEqual(Object.keys(out), ['name', 'capabilities', 'contributes', 'scripts']);
    assert.deepEqual(out.contributes.commands, [{ command: 'a' }]);
    assert.deepEqual(out.contributes.configuration, configurationContribution());
    assert.equal(generatePackageJson(generatePackageJson(text)), generatePackageJson(text), 'idempotent');
  });

  test('docs table: one row per setting, restricted ones marked, pipes escaped', () => {
    const md = settingsMarkdown();
    const rows = md.split('\n').filter(l => l.startsWith('| `unrollLens.'));
    assert.equal(rows.length, SETTING_ENTRIES.length);
    assert.match(md, /\| `unrollLens\.profile\.launcher` \| string\[\] \| `\[\]` \| .* \| yes \|/);
    assert.match(md, /\| `unrollLens\.arch` \| .* \| {2}\|$/m);
    assert.match(md, /`base` \\\| `none`/);
    for (const r of rows) assert.equal(r.split(/(?<!\\)\|/).length, 7, r);
  });
});
