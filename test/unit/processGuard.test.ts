// Issue 23, leaks, at the level of runProcess (every tool we run goes through it): cancelling
// through an AbortSignal, a timeout, or a tool that exits leaving children behind leaves no
// process and no temp file; each run has a private TMPDIR under this process's temp root (ncu's
// profiling runs keep the shared one, where its lock lives). A property test cancels and times out
// runs at random moments, several at once, and then looks for anything left (fast-check; each
// case costs real processes, so 15 cases).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import fc from 'fast-check';
import { runProcess } from '../../src/engine/toolchain/process';
import { processGuard, RUN_MARKER_VAR } from '../../src/engine/toolchain/processGuard';
import { alive, contents, fakeSlowTool, killAll, processesWithEnv, started, until } from './leakHelpers';
import { propertyRuns } from './propertyRuns';

// Everything this test file's process writes to "the temp folder" goes here, so it can be checked.
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-leak-guard-work-'));
const systemTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-leak-guard-'));
process.env.TMPDIR = systemTmp;
const canary = path.join(work, 'canary.txt');
const tool = path.join(work, 'tool');
const leaver = path.join(work, 'leaver');

/** Nothing of this process's runs alive, no temp folder of a run left, nothing but our (empty) root in the temp folder. */
async function assertClean(what: string): Promise<void> {
  const mine = `${RUN_MARKER_VAR}=${processGuard.session}.`;
  try {
    await until(
      `${what}: no process left`,
      () => processesWithEnv(mine).length === 0,
      4000,
      () => JSON.stringify(processesWithEnv(mine)),
    );
  } finally {
    killAll(processesWithEnv(mine).map(p => p.pid));
  }
  const left = contents(systemTmp).filter(p => !/^unroll-lens-\d+-\w+$/.test(p));
  assert.deepEqual(left, [], `${what}: temp files left`);
  assert.equal(fs.readFileSync(canary, 'utf8'), 'canary');
}

describe('runProcess leaves no process and no temp file', () => {
  before(() => {
    fs.writeFileSync(canary, 'canary');
    fakeSlowTool(tool, path.join(work, 'tool.started'));
    fakeSlowTool(leaver, path.join(work, 'leaver.started'), { exitAfterStart: true });
  });
  after(() => {
    processGuard.reapAll();
    for (const d of [work, systemTmp]) fs.rmSync(d, { recursive: true, force: true });
  });

  test('cancelled through its AbortSignal: the tool, its child and grandchildren killed, its private TMPDIR removed', async () => {
    const record = path.join(work, 'tool.started');
    fs.rmSync(record, { force: true });
    const ac = new AbortController();
    const result = runProcess(tool, [], { signal: ac.signal });
    await until('the tool to start', () => started(record).length > 0, 10_000);
    const [run] = started(record);
    assert.ok(run.tmp.startsWith(processGuard.tempRoot() + path.sep), `a private TMPDIR, not ${run.tmp}`);
    assert.ok(fs.readdirSync(run.tmp).some(f => f.startsWith('tmpxft_')));
    ac.abort();
    const r = await result;
    assert.equal(r.cancelled, true);
    assert.ok(!alive(run.pid) && !alive(run.child));
    assert.equal(fs.existsSync(run.tmp), false, 'the run’s temp folder is gone when runProcess returns');
    await assertClean('cancel');
  });

  test('timed out: the same', async () => {
    const record = path.join(work, 'tool.started');
    fs.rmSync(record, { force: true });
    const r = await runProcess(tool, [], { timeoutMs: 400 });
    assert.equal(r.timedOut, true);
    assert.equal(started(record).length, 1);
    assert.equal(fs.existsSync(started(record)[0].tmp), false);
    await assertClean('timeout');
  });

  test('a tool that exits leaving children running (ptxas outliving nvcc), one in its own session holding the output open: they are killed, the run ends, the folder removed', async () => {
    const record = path.join(work, 'leaver.started');
    fs.rmSync(record, { force: true });
    const r = await runProcess(leaver, [], { timeoutMs: 20_000 });
    assert.equal(r.exitCode, 0);
    assert.equal(r.timedOut, false, 'a descendant holding the output open must not hold the run open');
    const [run] = started(record);
    await until('the child to be killed', () => !alive(run.child), 4000);
    assert.equal(fs.existsSync(run.tmp), false);
    await assertClean('normal exit');
  });

  test('a tool that cannot start (no such file): a spawn error, and its temp folder removed all the same', async () => {
    const r = await runProcess(path.join(work, 'no-such-tool'), []);
    assert.match(r.spawnError ?? '', /ENOENT/);
    await assertClean('spawn error');
  });

  test('sharedTemp (ncu’s profiling lock lives in $TMPDIR): the caller’s TMPDIR is kept', async () => {
    const lock = path.join(work, 'lock');
    fs.mkdirSync(lock, { recursive: true });
    const r = await runProcess('/bin/sh', ['-c', 'echo "$TMPDIR"'], { env: { TMPDIR: lock }, sharedTemp: true });
    assert.equal(r.stdout.trim(), lock);
    const p = await runProcess('/bin/sh', ['-c', 'echo "$TMPDIR $TMP $TEMP"'], { env: { TMPDIR: lock } });
    const [a, b, c] = p.stdout.trim().split(' ');
    assert.ok(a.startsWith(processGuard.tempRoot() + path.sep) && a === b && b === c, p.stdout);
    await assertClean('shared temp');
  });

  test('property: runs cancelled or timed out at random moments, several at once, leave nothing', async () => {
    const ends = ['abort', 'timeout', 'abort-before-start', 'exit'] as const;
    const action = fc.record({ end: fc.constantFrom(...ends), delayMs: fc.integer({ min: 0, max: 60 }) });
    let i = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 3 }), async actions => {
        const what = `case ${i++}: ${JSON.stringify(actions)}`;
        await Promise.all(
          actions.map(async a => {
            const ac = new AbortController();
            if (a.end === 'abort-before-start') ac.abort();
            const run = runProcess(a.end === 'exit' ? leaver : tool, [], {
              signal: ac.signal,
              timeoutMs: a.end === 'timeout' ? a.delayMs + 1 : 20_000,
            });
            if (a.end === 'abort') setTimeout(() => ac.abort(), a.delayMs);
            const r = await run;
            if (a.end === 'abort' || a.end === 'abort-before-start') assert.equal(r.cancelled, true, what);
            if (a.end === 'timeout') assert.equal(r.timedOut, true, what);
            if (a.end === 'exit') assert.equal(r.exitCode, 0, what);
          }),
        );
        await assertClean(what);
      }),
      // A case takes under a second; the budget bounds shrinking, whose every step starts processes.
      propertyRuns(15, 0x1eac, 120_000, 'UL_LEAK_SEED'),
    );
  });
});
