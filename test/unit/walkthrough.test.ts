// The Get Started walkthrough as package.json contributes it (issue 27): every button runs a
// command the extension contributes (and the check buttons a check the server knows), every step
// completes on a context key a check sets or a command that exists, every media file exists and
// the .vsix ships it (.vscodeignore), links leave only for NVIDIA's own site, and the sample it
// opens is shipped and shows "Benchmark this loop" above its loop.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { Commands, foundContextKey, TOOL_CHECKS, WALKTHROUGH_ID, WALKTHROUGH_SAMPLE } from '../../src/protocol';
import { DEFAULT_SETTINGS } from '../../src/protocol';
import { codeLenses } from '../../src/server/features';
import { analyze } from './helpers';

const ROOT = path.join(__dirname, '..', '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
interface Step {
  id: string;
  title: string;
  description: string;
  media: { markdown?: string; image?: string };
  completionEvents?: string[];
}
const walkthroughs: { id: string; steps: Step[] }[] = pkg.contributes.walkthroughs ?? [];
const contributed = new Set<string>(pkg.contributes.commands.map((c: { command: string }) => c.command));

/** `command:ID?ARGS` links of a markdown text: the id and the decoded JSON arguments. */
function commandLinks(markdown: string): { id: string; args: unknown[] }[] {
  return [...markdown.matchAll(/\]\(command:([\w.]+)(?:\?([^)\s]+))?\)/g)].map(m => ({
    id: m[1],
    args: m[2] ? (JSON.parse(decodeURIComponent(m[2])) as unknown[]) : [],
  }));
}

/** Whether .vscodeignore (everything ignored, then `!pattern` lines) lets `file` into the .vsix. */
function shipped(file: string): boolean {
  const lines = fs
    .readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8')
    .split('\n')
    .map(l => l.trim())
    .filter(l => l && !l.startsWith('#'));
  let included = true;
  for (const l of lines) {
    const negate = l.startsWith('!');
    const glob = negate ? l.slice(1) : l;
    const re = new RegExp(
      `^${glob
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*/g, '\0')
        .replace(/\*/g, '[^/]*')
        .replace(/\0/g, '.*')}$`,
    );
    if (re.test(file)) included = negate;
  }
  return included;
}

describe('the Get Started walkthrough (package.json)', () => {
  test('one walkthrough, the id the Get Started command opens, with a step per check and the first benchmark', () => {
    assert.deepEqual(
      walkthroughs.map(w => w.id),
      [WALKTHROUGH_ID],
    );
    assert.deepEqual(
      walkthroughs[0].steps.map(s => s.id),
      [...TOOL_CHECKS, 'benchmark', 'project'],
    );
  });

  test('every button runs a contributed command; each check step has its own check button', () => {
    for (const step of walkthroughs[0].steps) {
      const links = commandLinks(step.description);
      assert.ok(links.length > 0, `${step.id}: no button`);
      for (const l of links) assert.ok(contributed.has(l.id), `${step.id}: ${l.id} is not in contributes.commands`);
      if ((TOOL_CHECKS as readonly string[]).includes(step.id))
        assert.deepEqual(links, [{ id: Commands.checkTool, args: [step.id] }], `${step.id}: its check`);
    }
    const step = (id: string) => walkthroughs[0].steps.find(s => s.id === id)!;
    assert.deepEqual(commandLinks(step('benchmark').description), [{ id: Commands.openSample, args: [] }]);
    assert.deepEqual(commandLinks(step('project').description), [{ id: Commands.openProjectSettings, args: [] }]);
    for (const c of [Commands.checkTool, Commands.openWalkthrough, Commands.openSample]) assert.ok(contributed.has(c), c);
  });

  test('a check step completes when its check finds what it looks for; the last when a loop is benchmarked', () => {
    for (const step of walkthroughs[0].steps) {
      const expected = (TOOL_CHECKS as readonly string[]).includes(step.id)
        ? [`onContext:${foundContextKey(step.id as (typeof TOOL_CHECKS)[number])}`]
        : step.id === 'project'
          ? ['onSettingChanged:unrollLens.project.runCommand']
          : [`onCommand:${Commands.benchmarkLoop}`];
      assert.deepEqual(step.completionEvents, expected, step.id);
      for (const e of step.completionEvents ?? []) if (e.startsWith('onCommand:')) assert.ok(contributed.has(e.slice(10)), e);
    }
  });

  test('every step has markdown media that exists, is shipped in the .vsix, links only commands we contribute and NVIDIA', () => {
    for (const step of walkthroughs[0].steps) {
      const md = step.media.markdown;
      assert.ok(md, `${step.id}: no markdown media`);
      assert.ok(fs.existsSync(path.join(ROOT, md)), `${md} does not exist`);
      assert.ok(shipped(md), `${md} is not shipped (.vscodeignore)`);
      const text = fs.readFileSync(path.join(ROOT, md), 'utf8');
      for (const l of commandLinks(text)) assert.ok(contributed.has(l.id), `${md}: ${l.id}`);
      for (const url of text.match(/https?:\/\/[^\s)>\]]+/g) ?? [])
        assert.match(url, /^https:\/\/developer\.nvidia\.com\//, `${md}: ${url} is not on NVIDIA's own site`);
    }
    assert.ok(!shipped('walkthrough/sample/other.cu') && !shipped('cuda-samples/matmul_unroll.cu'), 'only what is listed ships');
  });

  test('the counter permission step says the fix: the driver option in /etc/modprobe.d, or profiling as an administrator', () => {
    const gpu = fs.readFileSync(path.join(ROOT, walkthroughs[0].steps.find(s => s.id === 'gpu')!.media.markdown!), 'utf8');
    assert.match(gpu, /options nvidia NVreg_RestrictProfilingToAdminUsers=0/);
    assert.match(gpu, /\/etc\/modprobe\.d\//);
    assert.match(gpu, /CAP_SYS_ADMIN/);
    assert.match(
      gpu,
      /\[NVIDIA Development Tools Solutions - ERR_NVGPUCTRPERM: Permission issue with Performance Counters\]\(https:\/\/developer\.nvidia\.com\//,
    );
  });

  test('the sample is shipped and shows "Benchmark this loop" above its tap loop', async () => {
    assert.ok(shipped(WALKTHROUGH_SAMPLE), `${WALKTHROUGH_SAMPLE} is not shipped`);
    const text = fs.readFileSync(path.join(ROOT, WALKTHROUGH_SAMPLE), 'utf8');
    const lenses = codeLenses('file:///first_benchmark.cu', await analyze(text, 'first_benchmark.cu'), DEFAULT_SETTINGS, null, null, true);
    const bench = lenses.filter(l => l.command?.title === 'Benchmark this loop');
    assert.equal(bench.length, 1);
    const line = bench[0].range.start.line;
    assert.match(text.split('\n')[line], /for \(int t = 0; t < taps; \+\+t\)/);
    assert.match(fs.readFileSync(path.join(ROOT, 'walkthrough', 'benchmark.md'), 'utf8'), /Benchmark this loop/);
    assert.match(pkg.contributes.walkthroughs[0].steps.find((s: Step) => s.id === 'benchmark').description, /"Benchmark this loop"/);
  });
});
