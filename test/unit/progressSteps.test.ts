// LSP $/progress (absolute percentages) → VS Code progress steps (increments), as the client's
// one progress bridge (src/extension/progress.ts) reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProgressSteps } from '../../src/extension/progressSteps';

test('percentages become increments; messages pass through', () => {
  const s = new ProgressSteps();
  assert.equal(
    s.next({ kind: 'begin', title: 'Unroll Lens: building unroll variants', percentage: 0, message: 'line 12', cancellable: true }),
    null,
    'begin repeats the notification title: nothing to show',
  );
  assert.deepEqual(s.next({ kind: 'report', percentage: 25, message: '1/4: unroll 1' }), { increment: 25, message: '1/4: unroll 1' });
  assert.deepEqual(s.next({ kind: 'report', percentage: 75, message: '3/4: unroll 4' }), { increment: 50, message: '3/4: unroll 4' });
  assert.deepEqual(s.next({ kind: 'report', message: 'disassembling' }), { message: 'disassembling' });
  assert.equal(s.next({ kind: 'report' }), null);
  assert.deepEqual(s.next({ kind: 'report', percentage: 100 }), { increment: 25 });
  assert.equal(s.next({ kind: 'end' }), null);
});

test('the bar never moves back', () => {
  const s = new ProgressSteps();
  s.next({ kind: 'report', percentage: 60 });
  assert.deepEqual(s.next({ kind: 'report', percentage: 40, message: 'profiling' }), { message: 'profiling' });
  assert.equal(s.next({ kind: 'report', percentage: 50 }), null);
  assert.deepEqual(s.next({ kind: 'report', percentage: 70 }), { increment: 10 });
});

test('a begin with a percentage starts the bar there', () => {
  const s = new ProgressSteps();
  assert.deepEqual(s.next({ kind: 'begin', title: 't', percentage: 10 }), { increment: 10 });
  assert.deepEqual(s.next({ kind: 'report', percentage: 30 }), { increment: 20 });
});
