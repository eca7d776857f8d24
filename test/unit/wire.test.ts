// The server's mapping of engine reports onto the protocol's wire types: only the fields the
// client uses, display strings computed server-side, and plain JSON (what the LSP connection sends).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, lineOf } from './helpers';
import type { SweepVariant } from '../../src/schema/types';
import { benchResult, benchRow } from './benchFixture';
import type { LineStalls } from '../../src/engine/profile/stalls';
import type { LoopReport, LoopVariant } from '../../src/engine/variants/reports';
import type { SweepResult } from '../../src/protocol';
import { toAnalysisStatus, toBenchLoopResult, toFileAnalysisResult, toLoopVariantsResult } from '../../src/server/wire';

const SRC = `template <int B>
__global__ void k(float* a, int n) {
  #pragma unroll 4
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < B; ++j) a[i * B + j] = 0;
  }
}
template __global__ void k<32>(float*, int);
__device__ float f(float* a) {
  float s = 0;
  for (int i = 0; i < 8; ++i) s += a[i];
  return s;
}
`;

/** The value as the client receives it: JSON through the LSP connection. */
const overTheWire = <T>(v: T): T => JSON.parse(JSON.stringify(v));

describe('fileAnalysis', () => {
  test('kernels and loops with the CodeLens summary as the quick pick shows it', async () => {
    const r = toFileAnalysisResult(await analyze(SRC), SRC);
    const outer = lineOf(SRC, 'for (int i = 0; i < n');
    assert.deepEqual(r, {
      launched: [],
      kernels: [
        {
          name: 'k',
          qualifier: 'global',
          line: 2,
          templateParameters: ['B'],
          loops: [
            {
              line: outer,
              startLine: outer,
              endLine: outer + 2,
              kind: 'for',
              depth: 0,
              summary: 'unroll 4 requested · trip count runtime',
            },
            {
              line: outer + 1,
              startLine: outer + 1,
              endLine: outer + 1,
              kind: 'for',
              depth: 1,
              summary: 'no unroll pragma · trip count 32',
            },
          ],
        },
        {
          name: 'f',
          qualifier: 'device',
          line: 9,
          templateParameters: [],
          loops: [{ line: 11, startLine: 11, endLine: 11, kind: 'for', depth: 0, summary: 'no unroll pragma · trip count 8' }],
        },
      ],
    });
    assert.deepEqual(overTheWire(r), r);
  });

  test('the kernels the file launches: directly, through cudaLaunchKernel and through a table of kernel pointers', async () => {
    const src = [
      '__global__ void a(float* p) {}',
      '__global__ void b(float* p) {}',
      '__global__ void c(float* p) {}',
      '__global__ void d(float* p) {}',
      '__global__ void unused(float* p) {}',
      'struct V { const char* name; void (*kernel)(float*); };',
      'int main() {',
      '  float* p = nullptr;',
      '  a<<<1, 32>>>(p);',
      '  void* args[] = {&p};',
      '  cudaLaunchKernel((const void*)b, dim3(1), dim3(32), args, 0, 0);',
      '  const V vs[] = {{"c", c}, {"d", d}};',
      '  for (const V& v : vs) v.kernel<<<1, 32>>>(p);',
      '}',
    ].join('\n');
    const r = toFileAnalysisResult(await analyze(src), src);
    assert.deepEqual(r.launched, ['a', 'b', 'c', 'd']);
    assert.deepEqual(
      r.kernels.map(k => k.name),
      ['a', 'b', 'c', 'd', 'unused'],
    );
  });

  test('analysis status counts', async () => {
    const s = toAnalysisStatus('file:///x.cu', await analyze(SRC), 1.5);
    assert.deepEqual(s, {
      uri: 'file:///x.cu',
      kernels: 2,
      loops: 3,
      pragmas: 1,
      manualUnrolls: 0,
      hasSyntaxErrors: false,
      elapsedMs: 1.5,
    });
  });
});

function variant(over: Partial<LoopVariant>): LoopVariant {
  return {
    factor: 'default',
    key: 'k',
    status: 'ok',
    kernel: '_Z1kPfi',
    kernelInstructions: 100,
    kernelBytes: 1600,
    loopInstructions: 40,
    effectiveUnroll: 4,
    fullyUnrolled: false,
    registers: 32,
    spillStores: 0,
    spillLoads: 0,
    identicalTo: null,
    cached: false,
    compileMs: 120,
    failure: null,
    kernelSizes: { _Z1kPfi: 100 },
    ...over,
  };
}

/** The panel's copy of a run passes through unchanged (its conversion is tested in the sweep tests). */
const PANEL = {
  schema: 1,
  file: '/x.cu',
  kernel: 'k',
  kernelLine: 1,
  loops: [],
  arch: 'sm_90',
  nvcc: '13.0',
  gpu: null,
  static: true,
  strategy: 'exhaustive',
  origin: 'variants',
  createdAt: '2026-11-22T00:00:00.000Z',
  factors: [],
  params: {},
  spaceSize: 0,
  evaluations: 0,
  baseline: 'as-written',
  best: null,
  bestBasis: null,
  icacheBudgetBytes: 50000,
  icacheBudgetNote: 'test',
  variants: [],
  notes: [],
  complete: true,
} satisfies SweepResult;

describe('loopVariants', () => {
  test('factor, status, kernel SASS and effective unroll per variant; the notes', () => {
    const report: LoopReport = {
      line: 4,
      kernel: '_Z1kPfi',
      written: 4,
      arch: 'sm_90',
      limitation: null,
      notes: ['unroll 16 was capped at ×8'],
      variants: [
        variant({ factor: 'default' }),
        variant({ factor: 16, effectiveUnroll: 8, identicalTo: 8 }),
        variant({
          factor: 'full',
          status: 'failed',
          kernelInstructions: null,
          effectiveUnroll: null,
          failure: { kind: 'error', messages: [] },
        }),
      ],
    };
    const r = toLoopVariantsResult(report, PANEL);
    assert.deepEqual(r, {
      variants: [
        { factor: 'default', status: 'ok', kernelInstructions: 100, effectiveUnroll: 4 },
        { factor: 16, status: 'ok', kernelInstructions: 100, effectiveUnroll: 8 },
        { factor: 'full', status: 'failed', kernelInstructions: null, effectiveUnroll: null },
      ],
      notes: ['unroll 16 was capped at ×8'],
      result: PANEL,
    });
    assert.deepEqual(overTheWire(r), r);
  });
});

/** A bench row of the loop at line 4 (a one-loop GPU sweep's variant). */
function run(label: string, over: Partial<SweepVariant> = {}): SweepVariant {
  const f: SweepVariant['factors'] = label === 'as-written' ? {} : { 4: /^\d+$/.test(label) ? Number(label) : (label as 'full') };
  return benchRow(label, {
    factors: f,
    kernel: '_Z1kPfi',
    medianMs: 1,
    iqrMs: 0.01,
    q1Ms: 0.99,
    q3Ms: 1.0,
    stallShare: { long_scoreboard: 0.5, no_instruction: 0.3, wait: 0.2 },
    achievedOccupancy: 50,
    ...over,
  });
}

function stalls(line: number, samples: number, stallShare: Record<string, number>): LineStalls {
  return {
    file: '/x.cu',
    line,
    source: '',
    samples,
    samplesNotIssued: 0,
    instructionsExecuted: null,
    stalls: {},
    stallsNotIssued: {},
    stallShare,
    kernels: ['k'],
  };
}

function bench(over: Partial<SweepResult>): SweepResult {
  const variants = [
    run('as-written'),
    run('4', { medianMs: 0.8, speedup: 1.25, withinNoise: false }),
    run('8', { medianMs: 0.8, speedup: 1.25, withinNoise: false }),
    run('full', {
      status: 'compile',
      message: 'nvcc ran out of memory',
      medianMs: null,
      iqrMs: null,
      speedup: null,
      withinNoise: null,
    }),
  ];
  return benchResult({
    loops: [{ line: 4, written: 'default', tripCount: 'runtime', pragma: null }],
    variants,
    timing: { wallS: 10, compileS: 4, checkS: 1, profileS: 5, gpuIdleS: 0.5, gpuRuns: 8, gpus: [null] },
    ...over,
  });
}

describe('benchLoop', () => {
  test('variants as the client logs them, the fastest (first of equal medians) and the baseline', () => {
    const result = bench({});
    const r = toBenchLoopResult(result, '/ws/.unroll-lens/results/k.json');
    assert.equal(r.baseline, 'as-written');
    assert.equal(r.result, result, 'the panel shows the bench result itself');
    assert.equal(r.savedPath, '/ws/.unroll-lens/results/k.json');
    assert.equal(r.fastest, '4');
    assert.deepEqual(r.variants[3], {
      label: 'full',
      status: 'compile',
      message: 'nvcc ran out of memory',
      medianMs: null,
      iqrMs: null,
      speedup: null,
      withinNoise: null,
      icache: null,
    });
    assert.deepEqual(Object.keys(r.variants[0]).sort(), [
      'icache',
      'iqrMs',
      'label',
      'medianMs',
      'message',
      'speedup',
      'status',
      'withinNoise',
    ]);
    assert.deepEqual(r.lineStalls, [], 'no source stalls collected: no notes');
    assert.deepEqual(overTheWire(r), r);
  });

  test('no variant ran: no fastest', () => {
    const r = toBenchLoopResult(
      bench({ variants: [run('as-written', { status: 'runtime', medianMs: null, message: 'exit 1' })] }),
      '/ws/.unroll-lens/results/k.json',
    );
    assert.equal(r.fastest, null);
  });

  test('inline stall notes: share of all sampled lines and the top three reasons; lines under 1 % left out', () => {
    const r = toBenchLoopResult(
      bench({
        lineStalls: [
          stalls(5, 600, { long_scoreboard: 0.5, no_instruction: 0.25, wait: 0.2, barrier: 0.05 }),
          stalls(6, 395, { wait: 1 }),
          stalls(7, 5, { wait: 1 }),
        ],
      }),
      '/ws/.unroll-lens/results/k.json',
    );
    assert.deepEqual(r.lineStalls, [
      { line: 5, text: '60.0% of stall samples · long_scoreboard 50.0%, no_instruction 25.0%, wait 20.0%' },
      { line: 6, text: '39.5% of stall samples · wait 100.0%' },
    ]);
  });
});
