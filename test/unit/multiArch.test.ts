// Several architectures at once (issue 12): `sass --arch sm_80,sm_90` on the real toolchain
// (cuda-samples/matmul_unroll.cu, loop at line 51 of matmul_basic), the loop hover's table with one
// column set per architecture (unrollLens.extraArchs), and nvdisasm's own error when it cannot
// read an architecture's code.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { archListOption } from '../../src/cli/sass';
import { UsageError } from '../../src/cli/io';
import { loopSassMarkdown, multiArchVariantTable, SassFacts } from '../../src/engine/report/sassText';
import type { LoopReport, LoopVariant } from '../../src/engine/variants/reports';
import { VariantInspector } from '../../src/engine/variants/inspect';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { VariantBuilder } from '../../src/engine/variants/build';
import type { CancellationToken, Connection } from 'vscode-languageserver/node';
import { pathToFileURL } from 'url';
import { DEFAULT_SETTINGS, Settings } from '../../src/settings';
import { ServerToolchain } from '../../src/server/toolchain';
import { VariantService } from '../../src/server/variants';
import { DocumentFactsStore } from '../../src/server/facts';
import { analyze, kernel, loopAt, REPO_ROOT, SAMPLES, useCudaTools } from './helpers';

async function runCli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: x => (stdout += x), err: x => (stderr += x), isTTY: false });
  return { code, stdout, stderr };
}

const SAMPLE = path.join(SAMPLES, 'matmul_unroll.cu');

function variant(over: Partial<LoopVariant>): LoopVariant {
  return {
    factor: 'default',
    key: 'k',
    status: 'ok',
    kernel: '_Z12matmul_basicPKfS0_Pfi',
    kernelInstructions: 100,
    kernelBytes: 1600,
    loopInstructions: 60,
    effectiveUnroll: 4,
    fullyUnrolled: false,
    registers: 32,
    spillStores: 0,
    spillLoads: 0,
    identicalTo: null,
    cached: false,
    compileMs: 1,
    failure: null,
    ...over,
  };
}

function report(arch: string, variants: LoopVariant[], over: Partial<LoopReport> = {}): LoopReport {
  return { line: 51, kernel: 'matmul_basic', written: 'default', arch, variants, notes: [], limitation: null, ...over };
}

describe('loop hover: one column set per architecture', () => {
  const sm90 = report(
    'sm_90',
    [
      variant({ factor: 'default', kernelInstructions: 216, loopInstructions: 184, effectiveUnroll: 16 }),
      variant({ factor: 1, kernelInstructions: 56, loopInstructions: 22, effectiveUnroll: 1, registers: 16 }),
      variant({ factor: 4, kernelInstructions: 88, loopInstructions: 61, effectiveUnroll: 4, registers: 25 }),
    ],
    { notes: ['unroll 16 was capped'] },
  );
  const sm80 = report(
    'sm_80',
    [
      variant({ factor: 'default', kernelInstructions: 208, loopInstructions: 182, effectiveUnroll: 16, spillStores: 8 }),
      variant({ factor: 1, kernelInstructions: 48, loopInstructions: 22, effectiveUnroll: 1, registers: 16 }),
      variant({ factor: 4, status: 'failed', kernelInstructions: null, loopInstructions: null, effectiveUnroll: null, registers: null }),
    ],
    { limitation: 'nvdisasm cannot read sm_80 code' },
  );

  async function hover(facts: SassFacts) {
    const src = fs.readFileSync(SAMPLE, 'utf8');
    const k = kernel(await analyze(src, SAMPLE), 'matmul_basic');
    return loopSassMarkdown(facts, k, loopAt(k, 51))!;
  }

  test('two architectures: arch-named columns, per-arch marks, failed variants, notes and limitations named by arch', async () => {
    const md = await hover({ file: null, loops: new Map([[51, sm90]]), extraArchLoops: new Map([[51, new Map([['sm_80', sm80]])]]) });
    const lines = md.split('\n');
    assert.ok(
      lines.includes(
        '| factor | sm_90 kernel SASS | sm_90 loop SASS | sm_90 regs | sm_90 nvcc unroll | sm_80 kernel SASS | sm_80 loop SASS | sm_80 regs | sm_80 nvcc unroll |',
      ),
      md,
    );
    assert.ok(lines.includes('|---|---|---|---|---|---|---|---|---|'), md);
    // sm_90: 216 is the most, 56 the fewest; sm_80: 208 the most (8 B spilled), 48 the fewest, 4 failed.
    assert.ok(lines.includes('| default | *216* | 184 | 32 | ×16 | *208* | 182 | 32 (spills 8 B) | ×16 |'), md);
    assert.ok(lines.includes('| 1 | **56** | 22 | 16 | ×1 | **48** | 22 | 16 | ×1 |'), md);
    assert.ok(lines.includes('| 4 | 88 | 61 | 25 | ×4 | – | – | – | failed |'), md);
    assert.match(md, /\*\*Unroll variants\*\* of this loop on sm_90, sm_80 /);
    assert.ok(lines.includes('- sm_90: unroll 16 was capped'), md);
    assert.ok(lines.includes('- sm_80: nvdisasm cannot read sm_80 code'), md);
  });

  test("one architecture (no extra, or the extra is the main one): today's table, unchanged", async () => {
    for (const extra of [undefined, new Map(), new Map([[51, new Map([['sm_90', sm90]])]])]) {
      const md = await hover({ file: null, loops: new Map([[51, sm90]]), ...(extra ? { extraArchLoops: extra } : {}) });
      assert.match(
        md,
        /^\| factor \| kernel SASS \| bytes \| loop SASS \| regs \| spills \| stack · loop LDL\/STL \| nvcc unroll \| same code as \|$/m,
      );
      assert.doesNotMatch(md, /sm_90 kernel SASS/);
    }
  });

  test('a factor only one architecture built: dashes in the other', () => {
    const t = multiArchVariantTable([report('sm_90', [variant({ factor: 8 })]), report('sm_80', [variant({ factor: 'full' })])]);
    assert.match(t, /^\| 8 \| \*\*100\*\* \| 60 \| 32 \| ×4 \| – \| – \| – \| – \|$/m);
    assert.match(t, /^\| full \| – \| – \| – \| – \| \*\*100\*\* \| 60 \| 32 \| ×4 \|$/m);
  });

  test('an extra architecture that could not be built: no rows of its own, its reason under the table', async () => {
    const failed = report('sm_100', [], { limitation: 'no variants for sm_100: nvcc cannot build for it' });
    const md = await hover({ file: null, loops: new Map([[51, sm90]]), extraArchLoops: new Map([[51, new Map([['sm_100', failed]])]]) });
    assert.match(md, /^\| 1 \| \*\*56\*\* \| 22 \| 16 \| ×1 \| – \| – \| – \| – \|$/m);
    assert.match(md, /^- sm_100: no variants for sm_100: nvcc cannot build for it$/m);
  });
});

describe('--arch list', () => {
  test('comma list: trimmed, duplicates dropped, order kept; one value or none as before', () => {
    assert.deepEqual(archListOption('sm_90, sm_80,sm_90,sm_90a'), ['sm_90', 'sm_80', 'sm_90a']);
    assert.deepEqual(archListOption('sm_80'), ['sm_80']);
    assert.deepEqual(archListOption(undefined), []);
    assert.deepEqual(archListOption(''), []);
  });

  test('a bad entry or an empty one is a usage error naming it', () => {
    assert.throws(
      () => archListOption('sm_80,foo'),
      (e: Error) => e instanceof UsageError && /'foo' is not one/.test(e.message),
    );
    assert.throws(
      () => archListOption('sm_80,,sm_90'),
      (e: Error) => e instanceof UsageError && /an empty entry/.test(e.message),
    );
    assert.throws(
      () => archListOption('compute_90'),
      (e: Error) => e instanceof UsageError && /--arch takes an sm_XX/.test(e.message),
    );
  });
});

describe("nvdisasm that cannot read an architecture's code", () => {
  test('the limitation quotes its error, names the architecture and says what to do', () => {
    const toolchain = { nvdisasm: { path: '/opt/cuda-12.4/bin/nvdisasm', version: '12.4' } } as unknown as Toolchain;
    const inspector = new VariantInspector({ toolchain, builder: {} as VariantBuilder, arch: 'sm_100' });
    const why = inspector.limitation('elf', "nvdisasm fatal   : Cannot decode architecture 'SM100'")!;
    assert.match(
      why,
      /^nvdisasm 12\.4 \(\/opt\/cuda-12\.4\/bin\/nvdisasm\) cannot read sm_100 code \("nvdisasm fatal {3}: Cannot decode architecture 'SM100'"\)/,
    );
    assert.match(why, /loop instructions and nvcc's unroll for sm_100 are unknown \(kernel counts come from the cubin\)/);
    // the command line's words (the editor's name its setting: remedies.test.ts)
    assert.match(why, /Set CUDA_HOME to a CUDA Toolkit that knows this architecture \(nvcc's own\), or put its bin\/ first on PATH/);
    assert.match(inspector.limitation('elf', 'Segmentation fault')!, /gave no listing \(Segmentation fault\)/);
    assert.equal(inspector.limitation('nvdisasm', 'x'), null);
  });
});

describe('unroll-lens sass --arch sm_80,sm_90 (real nvcc and nvdisasm)', () => {
  const tools = useCudaTools(['nvdisasm']);

  test('kernel table: one column set per architecture, in the order given', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const r = await runCli(['sass', SAMPLE, '--arch', 'sm_80,sm_90']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0], /^nvcc \S+ · sm_80: counts from nvdisasm( \(cached\))? · sm_90: counts from nvdisasm( \(cached\))?$/);
    assert.match(lines[1], /^ {60} sm_80 ─+ sm_90 ─+$/);
    assert.match(lines[2], /^kernel +instr +bytes +regs +spill st\/ld +instr +bytes +regs +spill st\/ld$/);
    const row = lines.find(l => l.startsWith('matmul_basic('));
    assert.ok(row, r.stdout);
    const n = row.slice(60).trim().split(/\s+/);
    assert.equal(n.length, 8, row);
    // Same source, two architectures: each set is a full measurement (instructions × 16 = bytes).
    assert.equal(Number(n[1]), Number(n[0]) * 16);
    assert.equal(Number(n[5]), Number(n[4]) * 16);
  });

  test('--loop: the factor table has one column set per architecture, the notes name their architecture', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const r = await runCli(['sass', SAMPLE, '--arch', 'sm_80,sm_90', '--loop', '51', '--kernel', 'matmul_basic', '--factors', '1,4,full']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const at = lines.indexOf('loop at line 51 in matmul_basic (as written: compiler default)');
    assert.ok(at > 0, r.stdout);
    assert.match(lines[at + 1], /^ {10} sm_80 ─+ sm_90 ─+$/);
    const cells = (f: string) =>
      lines
        .find(l => l.startsWith(`${f} `))!
        .slice(10)
        .trim()
        .split(/\s+/);
    // kernel instr, loop instr, nvcc unroll, regs, spills — per architecture
    assert.deepEqual([cells('1')[2], cells('1')[7]], ['×1', '×1']);
    assert.deepEqual([cells('4')[2], cells('4')[7]], ['×4', '×4']);
    assert.deepEqual([cells('full')[2], cells('full')[7]], ['×4', '×4']);
    assert.ok(
      lines.some(l => /^note \(sm_80\): full unroll requested but the trip count is not a compile-time constant/.test(l)),
      r.stdout,
    );
    assert.ok(
      lines.some(l => /^note \(sm_90\): full unroll requested/.test(l)),
      r.stdout,
    );
  });

  test('--json: {archs: [the single-architecture object per architecture]}', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const r = await runCli([
      'sass',
      SAMPLE,
      '--arch',
      'sm_90,sm_80',
      '--loop',
      '51',
      '--kernel',
      'matmul_basic',
      '--factors',
      '4',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(j), ['archs']);
    assert.deepEqual(
      j.archs.map((x: { arch: string }) => x.arch),
      ['sm_90', 'sm_80'],
    );
    const single = JSON.parse(
      (await runCli(['sass', SAMPLE, '--arch', 'sm_80', '--loop', '51', '--kernel', 'matmul_basic', '--factors', '4', '--json'])).stdout,
    );
    assert.deepEqual(j.archs[1], single);
    assert.equal(j.archs[0].loop.variants[0].effectiveUnroll, 4);
  });

  test('--listing: one listing per architecture one after the other; with --json an array of listing objects', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const txt = await runCli(['sass', SAMPLE, '--arch', 'sm_80,sm_90', '--loop', '51', '--listing', '--factor', '4', '--normalise']);
    assert.equal(txt.code, 0, txt.stderr);
    const heads = txt.stdout.split('\n').filter(l => l.startsWith('// Unroll Lens · SASS of'));
    assert.equal(heads.length, 2, txt.stdout.slice(0, 500));
    assert.match(heads[0], / · factor 4 · sm_80 · /);
    assert.match(heads[1], / · factor 4 · sm_90 · /);
    assert.equal((txt.stdout.match(/A {2}loop ×4 main/g) ?? []).length, 2);
    const j = await runCli(['sass', SAMPLE, '--arch', 'sm_80,sm_90', '--loop', '51', '--listing', '--json']);
    assert.equal(j.code, 0, j.stderr);
    const out = JSON.parse(j.stdout);
    assert.ok(Array.isArray(out));
    assert.deepEqual(
      out.map((l: { arch: string; factor: string }) => [l.arch, l.factor]),
      [
        ['sm_80', 'as-written'],
        ['sm_90', 'as-written'],
      ],
    );
    for (const l of out)
      assert.deepEqual(
        l.loops.map((p: { unroll: number }) => p.unroll),
        [16, 8, 4, 1],
      );
  });

  test('--listing --stalls: the samples go beside the architecture whose machine code they are of; the other says why not', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const page = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'sass-stalls', 'matmul_basic.source-sass.csv');
    const r = await runCli(['sass', SAMPLE, '--loop', '51', '--listing', '--arch', 'sm_80,sm_90', '--stalls', page, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const [sm80, sm90] = JSON.parse(r.stdout);
    assert.equal(sm80.stalls, null);
    assert.ok(sm90.stalls, 'the H100 samples are of the sm_90 build');
    assert.match(r.stderr, /unroll-lens: sm_80: .*different machine code/);
  });

  test('a file that does not compile for one architecture: that one reported, the other printed, exit 1', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'unroll-lens-multiarch-'));
    try {
      const file = path.join(dir, 'k.cu');
      fs.writeFileSync(
        file,
        '__global__ void k(const float* x, float* y, int n) {\n#if __CUDA_ARCH__ >= 900\n#error not for sm_90\n#endif\n' +
          '  float acc = 0.0f;\n  for (int i = 0; i < n; ++i) acc += x[i] * 2.0f;\n  y[threadIdx.x] = acc;\n}\n',
      );
      const r = await runCli(['sass', file, '--arch', 'sm_80,sm_90']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /on sm_90: does not compile \(source\):\n {2}.*k\.cu:3: #error not for sm_90/);
      assert.match(r.stdout, /^k\(float const\*, float\*, int\) +\d+ +\d+ +\d+ +0\/0 +- +- +- +-$/m);
      assert.match(r.stdout, /^sm_90: does not compile \(source\)/m);
      const j = await runCli(['sass', file, '--arch', 'sm_80,sm_90', '--loop', '6', '--factors', '4', '--json']);
      assert.equal(j.code, 1, j.stderr);
      const out = JSON.parse(j.stdout);
      assert.equal(out.archs[0].loop.variants[0].effectiveUnroll, 4);
      assert.deepEqual(out.archs[1], { arch: 'sm_90', nvcc: out.archs[0].nvcc, error: '#error not for sm_90' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--kernel matching no kernel: exit 2 before any loop build, naming the architecture', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const r = await runCli(['sass', SAMPLE, '--arch', 'sm_80,sm_90', '--loop', '51', '--kernel', 'nosuch']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--kernel nosuch: no kernel of that name in .*matmul_unroll\.cu for sm_80 .*its kernels: .*matmul_basic/);
    assert.equal(r.stdout, '');
  });

  test('a bad entry: exit 2 and a message naming it', async () => {
    const r = await runCli(['sass', SAMPLE, '--arch', 'sm_80,foo']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--arch takes sm_XX architectures separated by commas \(e\.g\. sm_80,sm_90\); 'foo' is not one/);
  });
});

describe('server: unrollLens.extraArchs (real nvcc and nvdisasm)', () => {
  const tools = useCudaTools(['nvdisasm']);

  async function buildLoop(extraArchs: string[]) {
    const reports: string[] = [];
    const progress = { begin: () => undefined, report: (_p: number, m: string) => reports.push(m), done: () => undefined };
    const connection = {
      sendNotification: () => undefined,
      console: { log: () => undefined },
      window: { attachWorkDoneProgress: () => progress, showWarningMessage: async () => undefined },
    } as unknown as Connection;
    const settings: Settings = { ...DEFAULT_SETTINGS, arch: 'sm_90', extraArchs, unrollFactors: ['1', '4'] };
    const tc = new ServerToolchain(
      connection,
      () => settings,
      () => [path.dirname(SAMPLE)],
    );
    tc.setTrusted(true);
    const facts = new DocumentFactsStore(() => undefined);
    const service = new VariantService(
      connection,
      tc,
      facts,
      () => settings,
      () => path.join(os.tmpdir(), 'unroll-lens-test-cache'),
    );
    const text = fs.readFileSync(SAMPLE, 'utf8');
    const analysis = await analyze(text, SAMPLE);
    const uri = pathToFileURL(SAMPLE).toString();
    const token = {
      isCancellationRequested: false,
      onCancellationRequested: () => ({ dispose: () => undefined }),
    } as unknown as CancellationToken;
    const loop = await service.buildLoop(uri, text, analysis, 51, undefined, token);
    const k = kernel(analysis, 'matmul_basic');
    return { loop, facts: facts.get(uri, text)!, reports, hover: loopSassMarkdown(facts.get(uri, text), k, loopAt(k, 51))! };
  }

  test('the loop is built for the main arch and each extra one, in one progress; the hover shows a column set per arch', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const r = await buildLoop(['sm_80', 'sm_90', 'sm_80']);
    assert.equal(r.loop.arch, 'sm_90');
    assert.deepEqual([...r.facts.extraArchLoops.get(51)!.keys()], ['sm_80'], 'the main arch and duplicates are not built twice');
    const sm80 = r.facts.extraArchLoops.get(51)!.get('sm_80')!;
    assert.equal(sm80.arch, 'sm_80');
    assert.deepEqual(
      sm80.variants.map(v => [v.factor, v.status, v.effectiveUnroll]),
      [
        [1, 'ok', 1],
        [4, 'ok', 4],
      ],
    );
    assert.ok(r.reports.some(m => m.startsWith('sm_90 ')) && r.reports.some(m => m.startsWith('sm_80 ')), r.reports.join('\n'));
    assert.match(r.hover, /^\| factor \| sm_90 kernel SASS \| sm_90 loop SASS \| sm_90 regs \| sm_90 nvcc unroll \| sm_80 kernel SASS /m);
    assert.match(r.hover, /^\| 4 \| \S+ \| \d+ \| \d+ \| ×4 \| \S+ \| \d+ \| \d+ \| ×4 \|$/m);
  });

  test('no extra arch: no extra reports, the one-arch hover', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const r = await buildLoop([]);
    assert.equal(r.facts.extraArchLoops.size, 0);
    assert.match(r.hover, /^\| factor \| kernel SASS \| bytes \|/m);
  });
});
