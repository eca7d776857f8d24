// Which stages of `npm test` this machine can run, and the one line that says why the others are
// skipped (issue 27: the test command without root). Pure functions of the environment and of
// the test tools manifest (<tools>/test-tools.json, written by scripts/setup-test-tools.sh), used
// by scripts/test-all.mjs and test/webview/panel.test.mjs, checked by test/unit/testPlan.test.ts.
import fs from 'node:fs';
import path from 'node:path';

/** What each stage needs besides Node and npm's packages. */
export const STAGE_NEEDS = {
  unit: [],
  webview: ['chromium'],
  integration: ['chromium', 'codeServer'],
  ui: ['chromium', 'codeServer'],
};

const LABEL = { chromium: 'Chromium', codeServer: 'code-server' };
/** What to do about a missing tool, where the manifest does not say. */
export const HOW_TO_GET = {
  chromium: "install Debian's chromium (sudo apt-get install chromium) or set UNROLL_LENS_CHROMIUM=/path/to/chromium",
  codeServer: 'install g++, make and python3 (sudo apt-get install g++ make python3)',
};

/** The manifest of `toolsDir`, or null when there is none (the setup script has not run). */
export function readManifest(toolsDir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(toolsDir, 'test-tools.json'), 'utf8'));
  } catch {
    return null;
  }
}

/** <repo>/.tools, or UNROLL_LENS_TOOLS. */
export function toolsDirOf(root, env) {
  return env.UNROLL_LENS_TOOLS || path.join(root, '.tools');
}

/**
 * The browser the tests drive: UNROLL_LENS_CHROMIUM when it names one (that one or none), else the
 * manifest's, else Debian's /usr/bin/chromium. UNROLL_LENS_CHROMIUM=debian asks for the copy the
 * setup script unpacks under .tools, which the manifest names. `exists` is fs.existsSync in use.
 * @returns {{ path: string | null, why: string | null }}
 */
export function resolveChromium(env, manifest, exists) {
  const wanted = env.UNROLL_LENS_CHROMIUM;
  if (wanted && wanted !== 'debian') {
    return exists(wanted) ? { path: wanted, why: null } : { path: null, why: `UNROLL_LENS_CHROMIUM=${wanted} does not exist` };
  }
  if (manifest?.chromium && exists(manifest.chromium)) return { path: manifest.chromium, why: null };
  if (!wanted && exists('/usr/bin/chromium')) return { path: '/usr/bin/chromium', why: null };
  if (manifest?.chromiumMissing) return { path: null, why: manifest.chromiumMissing };
  if (manifest?.chromium) return { path: null, why: `${manifest.chromium} (from test-tools.json) does not exist` };
  return { path: null, why: 'not found, and scripts/setup-test-tools.sh has not run' };
}

/**
 * What is there of the tools the stages need: per tool its path, or null with why and how to get it.
 * @returns {Record<'chromium' | 'codeServer', { path: string | null, why: string | null, how: string | null }>}
 */
export function availableTools(env, manifest, exists) {
  const chromium = resolveChromium(env, manifest, exists);
  const entry = manifest?.codeServerEntry;
  const codeServer =
    entry && exists(entry)
      ? { path: entry, why: null }
      : { path: null, why: manifest?.codeServerMissing ?? (entry ? `${entry} does not exist` : 'not installed') };
  return {
    chromium: { ...chromium, how: chromium.path ? null : HOW_TO_GET.chromium },
    codeServer: { ...codeServer, how: codeServer.path ? null : (manifest?.codeServerHow ?? HOW_TO_GET.codeServer) },
  };
}

/**
 * For each requested stage: run it, skip it, or fail it for lack of a tool. The webview stage runs
 * without a browser too: its browser tests skip themselves (so they are counted), the rest runs.
 * Under CI a missing tool fails the stages that need it: CI is supposed to have everything.
 * @returns {{ stage: string, action: 'run' | 'skip' | 'fail', missing: string[] }[]}
 */
export function planStages(stages, available, { ci = false } = {}) {
  return stages.map(stage => {
    const missing = (STAGE_NEEDS[stage] ?? []).filter(t => !available[t]?.path);
    if (missing.length === 0) return { stage, action: 'run', missing };
    if (ci) return { stage, action: 'fail', missing };
    return { stage, action: stage === 'webview' ? 'run' : 'skip', missing };
  });
}

/** "a", "a and b", "a, b and c" */
function listOf(names) {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/**
 * One line per missing tool: the stages it kept from running and how many tests that is (counts
 * per stage; a stage without a count adds none), why the tool is missing and what to install.
 *   skipped the webview, integration and ui tests (51 tests): no Chromium (…) — install …
 */
export function skipLines(plan, available, skippedCounts) {
  const lines = [];
  for (const tool of Object.keys(LABEL)) {
    const stages = plan.filter(p => p.action !== 'fail' && p.missing.includes(tool)).map(p => p.stage);
    if (stages.length === 0) continue;
    const n = stages.reduce((sum, s) => sum + (skippedCounts[s] ?? 0), 0);
    const { why, how } = available[tool];
    lines.push(`skipped the ${listOf(stages)} tests (${n} test${n === 1 ? '' : 's'}): no ${LABEL[tool]}${why ? ` (${why})` : ''} — ${how}`);
  }
  return lines;
}

/** "no Chromium, no code-server": what a stage lacks. */
export function lacking(entry) {
  return entry.missing.map(t => `no ${LABEL[t]}`).join(', ');
}

/** The reason a stage fails under CI for lack of a tool. */
export function failNote(entry, available) {
  return entry.missing.map(t => `no ${LABEL[t]} (${available[t].why}); CI must have every test tool`).join('; ');
}

/** Tests a mocha suite file declares (`test(` / `it(` at the start of a line): what a skip leaves out. */
export function countSuiteTests(source) {
  return (source.match(/^\s*(test|it)\(/gm) ?? []).length;
}
