// Issue 27, the test command without root: which stages of `npm test` run on a machine that lacks
// Chromium or code-server, and the one line per missing tool that says so (scripts/test-plan.mjs,
// pure functions), then scripts/test-all.mjs itself with the webview stage and no browser.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { REPO_ROOT } from './helpers';
import { slurmSkipReason } from '../slurm/cluster';

type Tool = { path: string | null; why: string | null; how: string | null };
type Available = { chromium: Tool; codeServer: Tool };
type Entry = { stage: string; action: 'run' | 'skip' | 'fail'; missing: string[] };
type Manifest = Record<string, string | boolean | null> | null;
interface PlanModule {
  HOW_TO_GET: { chromium: string; codeServer: string };
  resolveChromium(
    env: Record<string, string>,
    manifest: Manifest,
    exists: (p: string) => boolean,
  ): { path: string | null; why: string | null };
  availableTools(env: Record<string, string>, manifest: Manifest, exists: (p: string) => boolean): Available;
  planStages(stages: string[], available: Available, opts?: { ci?: boolean }): Entry[];
  skipLines(plan: Entry[], available: Available, counts: Record<string, number>): string[];
  failNote(entry: Entry, available: Available): string;
  countSuiteTests(source: string): number;
}

const PLAN = path.join(REPO_ROOT, 'scripts', 'test-plan.mjs');
const load = (): Promise<PlanModule> => import(pathToFileURL(PLAN).href);
const STAGES = ['unit', 'webview', 'integration', 'ui'];
const existing =
  (...paths: string[]) =>
  (p: string) =>
    paths.includes(p);
const CS = '/t/.tools/code-server-4.100.3/node_modules/code-server/out/node/entry.js';
const full = { chromium: '/usr/bin/chromium', codeServerEntry: CS, chromiumMissing: null, codeServerMissing: null };
const noBrowser = {
  ...full,
  chromium: null,
  chromiumMissing: "not installed, and no Debian package without root: no apt-get to fetch Debian's chromium with",
};
const actions = (plan: Entry[]) =>
  Object.fromEntries(plan.map(p => [p.stage, `${p.action}${p.missing.length ? ` (no ${p.missing.join(', ')})` : ''}`]));

describe('test plan: the browser', () => {
  test('UNROLL_LENS_CHROMIUM names the one browser: there or none, whatever else the machine has', async () => {
    const m = await load();
    const all = existing('/opt/c/chrome', '/usr/bin/chromium', CS);
    assert.deepEqual(m.resolveChromium({ UNROLL_LENS_CHROMIUM: '/opt/c/chrome' }, full, all), { path: '/opt/c/chrome', why: null });
    assert.deepEqual(m.resolveChromium({ UNROLL_LENS_CHROMIUM: '/nonexistent' }, full, all), {
      path: null,
      why: 'UNROLL_LENS_CHROMIUM=/nonexistent does not exist',
    });
  });

  test("otherwise the manifest's, else Debian's; with neither, the manifest's reason", async () => {
    const m = await load();
    const unpacked = { ...full, chromium: '/t/.tools/chromium' };
    assert.equal(m.resolveChromium({}, unpacked, existing('/t/.tools/chromium', '/usr/bin/chromium')).path, '/t/.tools/chromium');
    assert.equal(m.resolveChromium({}, null, existing('/usr/bin/chromium')).path, '/usr/bin/chromium');
    assert.equal(m.resolveChromium({}, noBrowser, existing('/usr/bin/chromium')).path, '/usr/bin/chromium', 'installed since');
    assert.deepEqual(m.resolveChromium({}, noBrowser, existing()), { path: null, why: noBrowser.chromiumMissing });
    assert.match(m.resolveChromium({}, null, existing()).why!, /setup-test-tools\.sh has not run/);
    // debian: the unpacked copy only, not the system's
    assert.equal(
      m.resolveChromium({ UNROLL_LENS_CHROMIUM: 'debian' }, unpacked, existing('/t/.tools/chromium')).path,
      '/t/.tools/chromium',
    );
    assert.equal(m.resolveChromium({ UNROLL_LENS_CHROMIUM: 'debian' }, noBrowser, existing('/usr/bin/chromium')).path, null);
  });
});

describe('test plan: stages and the skip line', () => {
  test('everything there: every stage runs and no line is printed', async () => {
    const m = await load();
    const av = m.availableTools({}, full, existing('/usr/bin/chromium', CS));
    const plan = m.planStages(STAGES, av);
    assert.deepEqual(actions(plan), { unit: 'run', webview: 'run', integration: 'run', ui: 'run' });
    assert.deepEqual(m.skipLines(plan, av, {}), []);
  });

  test('no Chromium: unit runs, the webview stage runs with its browser tests skipped, the VS Code stages skip; one line', async () => {
    const m = await load();
    const av = m.availableTools({}, noBrowser, existing(CS));
    const plan = m.planStages(STAGES, av);
    assert.deepEqual(actions(plan), {
      unit: 'run',
      webview: 'run (no chromium)',
      integration: 'skip (no chromium)',
      ui: 'skip (no chromium)',
    });
    assert.deepEqual(m.skipLines(plan, av, { webview: 41, integration: 25, ui: 1 }), [
      `skipped the webview, integration and ui tests (67 tests): no Chromium (${noBrowser.chromiumMissing}) — ` +
        "install Debian's chromium (sudo apt-get install chromium) or set UNROLL_LENS_CHROMIUM=/path/to/chromium",
    ]);
  });

  test('no compilers for code-server: only the VS Code stages skip, with what to install', async () => {
    const m = await load();
    const manifest = {
      ...full,
      codeServerEntry: null,
      codeServerMissing: "g++ make not found: code-server's native modules are compiled on install",
      codeServerHow: 'install g++, make and python3 (sudo apt-get install g++ make python3)',
    };
    const av = m.availableTools({}, manifest, existing('/usr/bin/chromium'));
    const plan = m.planStages(STAGES, av);
    assert.deepEqual(actions(plan), { unit: 'run', webview: 'run', integration: 'skip (no codeServer)', ui: 'skip (no codeServer)' });
    assert.deepEqual(m.skipLines(plan, av, { integration: 25, ui: 1 }), [
      "skipped the integration and ui tests (26 tests): no code-server (g++ make not found: code-server's native modules are " +
        'compiled on install) — install g++, make and python3 (sudo apt-get install g++ make python3)',
    ]);
  });

  test('both missing: one line per tool; only the stages asked for are named', async () => {
    const m = await load();
    const av = m.availableTools({ UNROLL_LENS_CHROMIUM: '/nonexistent' }, { ...full, codeServerEntry: null }, existing());
    const lines = m.skipLines(m.planStages(['unit', 'integration'], av), av, { integration: 25 });
    assert.equal(lines.length, 2);
    assert.match(
      lines[0],
      /^skipped the integration tests \(25 tests\): no Chromium \(UNROLL_LENS_CHROMIUM=\/nonexistent does not exist\) — install/,
    );
    assert.match(
      lines[1],
      /^skipped the integration tests \(25 tests\): no code-server \(not installed\) — install g\+\+, make and python3/,
    );
    assert.deepEqual(m.skipLines(m.planStages(['unit'], av), av, {}), [], 'unit alone needs neither');
  });

  test('CI: a missing tool fails the stages that need it, and nothing is skipped', async () => {
    const m = await load();
    const av = m.availableTools({}, noBrowser, existing(CS));
    const plan = m.planStages(STAGES, av, { ci: true });
    assert.deepEqual(actions(plan), {
      unit: 'run',
      webview: 'fail (no chromium)',
      integration: 'fail (no chromium)',
      ui: 'fail (no chromium)',
    });
    assert.deepEqual(m.skipLines(plan, av, {}), []);
    assert.match(m.failNote(plan[1], av), /^no Chromium \(not installed, .*\); CI must have every test tool$/);
  });

  test('tests a skipped integration suite leaves out: its test( and it( calls', async () => {
    const m = await load();
    assert.equal(m.countSuiteTests("suite('a', () => {\n  test('x', async () => {});\n  it('y', () => {});\n  // test(\n});\n"), 2);
    const suite = path.join(REPO_ROOT, 'test', 'integration', 'suite');
    const n = fs
      .readdirSync(suite)
      .filter(f => f.endsWith('.test.ts'))
      .reduce((sum, f) => sum + m.countSuiteTests(fs.readFileSync(path.join(suite, f), 'utf8')), 0);
    assert.ok(n >= 20, `${n} integration tests`);
  });
});

describe('test-all.mjs with the webview stage and no browser', () => {
  const built = fs.existsSync(path.join(REPO_ROOT, 'dist', 'webview', 'panel.js'));
  const run = (extra: Record<string, string>) => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-test-plan-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      UNROLL_LENS_TEST_STAGES: 'webview',
      UNROLL_LENS_CHROMIUM: '/nonexistent',
      UNROLL_LENS_TOOLS: path.join(tmp, 'tools'),
      UNROLL_LENS_TEST_ARTIFACTS: path.join(tmp, 'artifacts'),
      ...extra,
    };
    if (!extra.CI) delete env.CI;
    delete env.NODE_TEST_CONTEXT; // (set by this test runner: the child's node --test would not run its file)
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'test-all.mjs')], { encoding: 'utf8', env, timeout: 120_000 });
    fs.rmSync(tmp, { recursive: true, force: true });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };

  test(
    'the browser tests are skipped and counted, the others pass, and the summary ends with the one line',
    { skip: built ? false : 'run npm run build first' },
    () => {
      const r = run({});
      assert.equal(r.code, 0, r.out);
      const summary = r.out.slice(r.out.lastIndexOf('=== summary'));
      const m = /webview +(\d+) passed, 0 failed, (\d+) skipped {2}\(browser tests skipped: no Chromium\)/.exec(summary);
      assert.ok(m, summary);
      assert.ok(Number(m[1]) >= 2 && Number(m[2]) >= 20, summary);
      const lines = summary.split('\n').filter(l => l.startsWith('skipped '));
      assert.deepEqual(lines, [
        `skipped the webview tests (${m[2]} tests): no Chromium (UNROLL_LENS_CHROMIUM=/nonexistent does not exist) — ` +
          "install Debian's chromium (sudo apt-get install chromium) or set UNROLL_LENS_CHROMIUM=/path/to/chromium",
      ]);
      assert.match(summary, new RegExp(`\\nTests: ${m[1]} passed, 0 failed, ${m[2]} skipped\\n`));
    },
  );

  test('under CI the same machine fails: CI must have a browser', { skip: built ? false : 'run npm run build first' }, () => {
    const r = run({ CI: 'true' });
    assert.equal(r.code, 1, r.out);
    assert.match(
      r.out,
      /webview +0 passed, 1 failed {2}\(no Chromium \(UNROLL_LENS_CHROMIUM=\/nonexistent does not exist\); CI must have every test tool\)/,
    );
    assert.doesNotMatch(r.out, /^skipped /m);
  });
});

describe("the Slurm stage's skip reason (test/slurm/cluster.ts)", () => {
  const ALL = ['slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'sinfo'];

  test('root with Slurm installed: runs', () => {
    assert.equal(slurmSkipReason(0, []), null);
  });

  test('root without Slurm: what is missing and how to install it, never "not root"', () => {
    const why = slurmSkipReason(0, ALL)!;
    assert.equal(why, `Slurm is not installed (${ALL.join(', ')} missing; apt-get install slurm-wlm munge)`);
    assert.doesNotMatch(why, /not root/);
    assert.doesNotMatch(slurmSkipReason(0, ['sinfo'])!, /not root/);
  });

  test('another user: not root, with its uid; without Slurm, both reasons', () => {
    assert.equal(slurmSkipReason(1000, []), 'not root (uid 1000; slurmd must run as root)');
    assert.equal(
      slurmSkipReason(1000, ['slurmd']),
      'Slurm is not installed (slurmd missing; sudo apt-get install slurm-wlm munge), and not root (uid 1000; slurmd must run as root)',
    );
    assert.equal(slurmSkipReason(undefined, []), 'not root (user id not known; slurmd must run as root)');
  });
});
