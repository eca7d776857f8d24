// The bundled cuda-samples/ are the scan/parse corpus: each assertion below was checked by
// reading the sample source (see cuda-samples/README.md for what each kernel demonstrates).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { analyze, kernel, lineOf, SAMPLES } from './helpers';
import { computeFindings } from '../../src/engine/parse/findings';
import type { FileAnalysis } from '../../src/engine/parse/model';

async function sample(name: string): Promise<{ src: string; a: FileAnalysis }> {
  const file = path.join(SAMPLES, name);
  const src = fs.readFileSync(file, 'utf8');
  return { src, a: await analyze(src, file) };
}

describe('cuda-samples corpus', () => {
  test('every sample parses without syntax errors and has kernels', async () => {
    const files = fs.readdirSync(SAMPLES).filter(f => f.endsWith('.cu'));
    assert.deepEqual(files.sort(), [
      'coarsen_template.cu',
      'coarsening.cu',
      'icache_cliff.cu',
      'icache_ilp.cu',
      'library_style.cu',
      'linear_small.cu',
      'manual_forms.cu',
      'matmul_unroll.cu',
      'matvec.cu',
      'reduce_unroll.cu',
    ]);
    for (const f of files) {
      const { a } = await sample(f);
      assert.equal(a.hasSyntaxErrors, false, f);
      assert.ok(
        a.kernels.some(k => k.qualifier === 'global'),
        f,
      );
    }
  });

  test('header_loops/: a header with device loops (3 pragmas, 1 without), its unit and compile_commands.json', async () => {
    const dir = path.join(SAMPLES, 'header_loops');
    assert.deepEqual(fs.readdirSync(dir).sort(), ['compile_commands.json', 'header_loops.cu', 'tile_ops.cuh']);
    const { a: h } = await sample('header_loops/tile_ops.cuh');
    assert.equal(h.hasSyntaxErrors, false);
    assert.deepEqual(
      h.kernels.map(k => [k.name, k.qualifier, k.loops.map(l => l.pragma?.text ?? null)]),
      [
        ['row_dot', 'device', ['unroll 4']],
        ['row_sum', 'device', [null]],
        ['horner8', 'device', ['unroll']],
        ['scaled_copy', 'device', ['unroll 2']],
      ],
    );
    const { src, a: tu } = await sample('header_loops/header_loops.cu');
    assert.match(src, /#include "tile_ops\.cuh"/);
    assert.deepEqual(
      tu.kernels.map(k => k.name),
      ['rows_dot', 'rows_sum', 'rows_poly'],
    );
  });

  test('matmul_unroll.cu: guarded strided bodies ×2/4/8/16, the unguarded ×4, pragma template', async () => {
    const { a } = await sample('matmul_unroll.cu');
    for (const u of [2, 4, 8, 16]) {
      const k = kernel(a, `matmul_unroll${u}`);
      assert.equal(k.loops.length, 1);
      assert.equal(k.loops[0].tripCount, 'runtime');
      assert.deepEqual(
        k.manualUnrolls.map(m => [m.pattern, m.factor, m.guarded, m.line]),
        [['strided-body', u, true, k.loops[0].line]],
      );
    }
    const ng = kernel(a, 'matmul_unroll4_noguard');
    assert.deepEqual(
      ng.manualUnrolls.map(m => [m.pattern, m.factor, m.guarded]),
      [['strided-body', 4, false]],
    );
    const f = computeFindings(a);
    assert.deepEqual(
      f.map(x => [x.code, x.kernel]),
      [['manual-unroll-no-remainder', 'matmul_unroll4_noguard']],
    );
    const basic = kernel(a, 'matmul_basic');
    assert.deepEqual(
      basic.loops.map(l => [l.tripCount, l.pragma]),
      [['runtime', null]],
    );
    assert.equal(basic.manualUnrolls.length, 0);
    const p = kernel(a, 'matmul_pragma');
    assert.deepEqual(p.templateParameters, ['U']);
    assert.deepEqual(
      p.loops.map(l => [l.pragma?.kind, l.pragma?.text, l.pragma?.factor]),
      [['expr', 'unroll U', null]],
    );
    assert.deepEqual(
      p.instantiations.map(i => i.U).sort((x, y) => x - y),
      [2, 4, 8, 16],
    );
  });

  test('manual_forms.cu: each hand-unrolled form is found once, its #pragma unroll twin has none', async () => {
    const { src, a } = await sample('manual_forms.cu');
    const found = (name: string) => kernel(a, name).manualUnrolls.map(m => [m.pattern, m.factor, m.line, m.endLine, m.vectorType ?? null]);
    const at = (needle: string) => lineOf(src, '    ' + needle); // code, not the header comment
    assert.deepEqual(found('multi_decl_manual'), [['multi-declarator', 4, at('float a0 = in[t]'), at('float a0 = in[t]'), null]]);
    assert.deepEqual(found('elements_manual'), [['element-assignments', 4, at('v[0] = in[t];'), at('v[3] = in[t + 3 * m];'), null]]);
    assert.deepEqual(found('accum_manual'), [['accumulate-chain', 4, at('sum += in[t];'), at('sum += in[t + 3 * m];'), null]]);
    assert.deepEqual(found('accum_array_manual'), [['accumulate-chain', 4, at('acc[0] += x'), at('acc[3] += x'), null]]);
    assert.deepEqual(found('expr_sum_manual'), [
      ['expression-sum', 4, at('sum += in[t] + in[t + m]'), at('sum += in[t] + in[t + m]'), null],
    ]);
    assert.deepEqual(found('dot_manual'), [['expression-sum', 4, at('float s = x[t] * y[t]'), at('float s = x[t] * y[t]'), null]]);
    assert.deepEqual(found('vec4_manual'), [['vector-load', 4, at('float4 v = reinterpret_cast'), at('s += v.w;'), 'float4']]);
    assert.deepEqual(found('vec2_manual'), [['vector-load', 2, at('float2 v = __ldg'), at('out[t] = v.x - v.y;'), 'float2']]);
    for (const k of a.kernels) {
      if (k.name.endsWith('_pragma')) {
        assert.deepEqual(k.manualUnrolls, [], k.name);
        assert.ok(
          k.loops.some(l => l.pragma?.kind === 'full'),
          `${k.name} has its #pragma unroll loop`,
        );
      }
    }
    assert.equal(a.kernels.filter(k => k.name.endsWith('_manual')).length, 8);
    assert.equal(a.kernels.filter(k => k.name.endsWith('_pragma')).length, 8);
  });

  test('reduce_unroll.cu: the reduction ladder', async () => {
    const { a } = await sample('reduce_unroll.cu');
    const manual = (name: string) => kernel(a, name).manualUnrolls.map(m => [m.pattern, m.factor]);
    assert.deepEqual(manual('reduce_interleaved'), []);
    // each rung's thread block reduces 2/4/8 data blocks (issue 26)
    assert.deepEqual(manual('reduce_unroll2'), [['block-level', 2]]);
    assert.deepEqual(manual('reduce_unroll4'), [['block-level', 4]]);
    assert.deepEqual(manual('reduce_unroll8'), [['block-level', 8]]);
    assert.deepEqual(manual('reduce_unroll8_warptail'), [
      ['block-level', 8],
      ['warp-tail', 6],
    ]);
    const complete = kernel(a, 'reduce_complete');
    assert.deepEqual(complete.templateParameters, ['iBlockSize']);
    assert.equal(complete.loops.length, 0, 'the complete unroll has no loop left');
    assert.ok(complete.manualUnrolls.some(m => m.pattern === 'warp-tail' && m.factor >= 6));
    assert.ok(complete.manualUnrolls.some(m => m.pattern === 'block-level' && m.factor === 8 && m.gridDivisor === 8));
    // the interleaved tree loop halves a runtime blockDim.x
    assert.equal(kernel(a, 'reduce_interleaved').loops[0].tripCount, 'runtime');
  });

  test('coarsen_template.cu: the coarsening factor as a template parameter, instantiated by a host switch', async () => {
    const { src, a } = await sample('coarsen_template.cu');
    const k = kernel(a, 'coarsen_potential');
    assert.deepEqual(k.templateParameters, ['COARSEN']);
    // each `case C: coarsen_potential<C><<<…>>>` of the host switch instantiates one
    assert.deepEqual(
      k.instantiations.map(i => i.COARSEN).sort((x, y) => x - y),
      [1, 2, 4, 8],
    );
    // the three `#pragma unroll` loops over COARSEN points, and the runtime atom loop
    const j = (nth: number) => lineOf(src, 'for (int j = 0; j < COARSEN; ++j)', nth);
    assert.deepEqual(
      k.loops.map(l => [l.line, l.pragma?.kind ?? null, l.tripCount]),
      [
        [j(1), 'full', 'dependent'],
        [lineOf(src, 'for (int a = 0; a < numatoms; ++a)'), null, 'runtime'],
        [j(2), 'full', 'dependent'],
        [j(3), 'full', 'dependent'],
      ],
    );
    for (const l of k.loops.filter(x => x.tripCount === 'dependent')) {
      assert.deepEqual(l.tripDependsOn, ['COARSEN']);
      assert.deepEqual(
        (l.tripCountByInstantiation ?? []).map(t => [t.instantiation.COARSEN, t.tripCount]).sort((x, y) => Number(x[0]) - Number(y[0])),
        [
          [1, 1],
          [2, 2],
          [4, 4],
          [8, 8],
        ],
      );
    }
    // no hand-written copies: the copies come from the pragma
    assert.deepEqual(k.manualUnrolls, []);
    const f = computeFindings(a).filter(x => x.code === 'full-unroll-dependent-trip');
    assert.equal(f.length, 3);
    assert.ok(
      f.every(x => /1, 2, 4, 8/.test(x.message)),
      JSON.stringify(f.map(x => x.message)),
    );
  });

  test('coarsening.cu: 1/2/4/8 rows or points per thread', async () => {
    const { a } = await sample('coarsening.cu');
    for (const n of [1, 2, 4, 8]) {
      for (const name of [`gj_rows${n}`, `potential_pts${n}`]) {
        const m = kernel(a, name).manualUnrolls;
        if (n === 1) assert.deepEqual(m, [], name);
        else {
          assert.ok(m.length >= 2, `${name}: ${JSON.stringify(m)}`);
          assert.ok(
            m.every(x => x.pattern === 'coarsening' && x.factor === n),
            `${name}: ${JSON.stringify(m)}`,
          );
        }
      }
    }
    // Gauss-Jordan pivots over a 32×32 system: a compile-time trip count
    assert.deepEqual(
      kernel(a, 'gj_rows4').loops.map(l => l.tripCount),
      [32],
    );
    assert.deepEqual(
      kernel(a, 'potential_pts4').loops.map(l => l.tripCount),
      ['runtime'],
    );
  });

  test('linear_small.cu: blanket full unrolls with constant trip counts explode the nest', async () => {
    const { src, a } = await sample('linear_small.cu');
    const k = kernel(a, 'linear_small');
    assert.deepEqual(
      k.loops.map(l => [l.depth, l.pragma?.kind, l.tripCount]),
      [
        [0, 'full', 128],
        [0, 'full', 8],
        [1, 'full', 4],
        [2, 'full', 256],
      ],
    );
    const rolled = kernel(a, 'linear_small_rolled');
    assert.deepEqual(
      rolled.loops.map(l => [l.pragma?.kind, l.pragma?.factor]),
      [
        ['disable', 1],
        ['disable', 1],
        ['disable', 1],
        ['count', 4],
      ],
    );
    const f = computeFindings(a);
    assert.deepEqual(
      f.map(x => [x.code, x.kernel, x.span.line]),
      [['nested-unroll-bloat', 'linear_small', lineOf(src, 'for (int r = 0; r < ROWS; ++r)') - 1]],
    );
  });

  test('matvec.cu: the shuffle reduction loop is a constant 5-step full unroll', async () => {
    const { a } = await sample('matvec.cu');
    const warp = kernel(a, 'matvec_warp_per_row');
    assert.deepEqual(
      warp.loops.map(l => [l.tripCount, l.pragma?.kind ?? null]),
      [
        ['runtime', null],
        [5, 'full'],
      ],
    );
    const many = kernel(a, 'matvec_warps_per_row');
    assert.deepEqual(many.templateParameters, ['W']);
    assert.deepEqual(
      many.instantiations.map(i => i.W).sort((x, y) => x - y),
      [2, 4, 8],
    );
  });

  test('icache_cliff.cu: hot loop body size is a template parameter, outer loop kept rolled', async () => {
    const { a } = await sample('icache_cliff.cu');
    const k = kernel(a, 'hot_loop');
    assert.deepEqual(
      k.loops.map(l => [l.depth, l.pragma?.kind, l.tripCount]),
      [
        [0, 'disable', 'runtime'],
        [1, 'full', 'dependent'],
      ],
    );
    assert.ok(k.instantiations.length >= 6, 'one instantiation per body size');
    const sizes = k.instantiations.map(i => i.BODY);
    assert.deepEqual(sizes, [...new Set(sizes)]);
  });

  test('icache_ilp.cu: a fully unrolled BODY-step inner loop (BODY a macro) inside a rolled outer loop, launched with 128 threads', async () => {
    const { a } = await sample('icache_ilp.cu');
    const k = kernel(a, 'ilp_chains');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.depth, l.pragma?.kind]),
      [
        [62, 0, 'disable'],
        [64, 1, 'full'],
      ],
    );
  });
});
