// Unit tests of the ncu CSV readers (src/engine/profile/ncuCsv.ts) on real Nsight Compute output:
// H200 fixtures and the H100 captures of test/fixtures/ncu/regenerate.sh (README.md there), plus
// hand-written CSV for the corner cases. Expected numbers were read from the files independently
// of the parser, with the commands quoted next to them (run in test/fixtures/ncu).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import {
  canonicalStallReason,
  detailsMetrics,
  kernelBaseName,
  normalizeKernelName,
  parseCsv,
  parseDetailsPage,
  parseDim3,
  parseNumber,
  parseRawPage,
  parseSourcePage,
  splitNcuLine,
  stripNcuLogLines,
  toNanoseconds,
} from '../../src/engine/profile/ncuCsv';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'ncu');
const read = (rel: string): string => fs.readFileSync(path.join(FIXTURES, rel), 'utf8');

describe('parseCsv: RFC 4180 and ncu leniency', () => {
  test('quoted commas, doubled quotes, embedded LF and CRLF, empty fields', () => {
    const text = 'a,"b,c","say ""hi""",""\r\n"multi\nline","x\r\ny",,z\n';
    assert.deepEqual(parseCsv(text), [
      ['a', 'b,c', 'say "hi"', ''],
      ['multi\nline', 'x\r\ny', '', 'z'],
    ]);
  });

  test('trailing comma gives a trailing empty field; blank lines are skipped; no final newline is fine', () => {
    assert.deepEqual(parseCsv('"1","2",\n\n"3"'), [['1', '2', ''], ['3']]);
  });

  test('a lone quote inside a quoted field is kept (ncu does not escape quotes)', () => {
    assert.deepEqual(parseCsv('"8","#include "x.cuh" here"\n'), [['8', '#include "x.cuh" here']]);
    assert.deepEqual(parseCsv('ab"c,d\n'), [['ab"c', 'd']]);
  });

  test('unterminated quoted field ends at the end of the text', () => {
    assert.deepEqual(parseCsv('"a","b'), [['a', 'b']]);
  });

  test('splitNcuLine: source text holding "," goes to the text column', () => {
    const line = '"12","printf("%d","x");","-","-","5"';
    assert.deepEqual(splitNcuLine(line, 5, 1), ['12', 'printf("%d","x");', '-', '-', '5']);
    assert.deepEqual(splitNcuLine('"Kernel Name","void k<(int)1>(int)",'), ['Kernel Name', 'void k<(int)1>(int)']);
    assert.deepEqual(splitNcuLine('"8","#include "mini_helper.cuh""'), ['8', '#include "mini_helper.cuh"']);
  });
});

describe('numbers and units', () => {
  test('parseNumber: thousands separators, n/a, empty, dashes', () => {
    assert.equal(parseNumber('1,234.56'), 1234.56);
    assert.equal(parseNumber('13,120'), 13120);
    assert.equal(parseNumber('150,109,880,320'), 150109880320);
    assert.equal(parseNumber('-1,024'), -1024);
    assert.equal(parseNumber('1.693280'), 1.69328);
    assert.equal(parseNumber('1e3'), 1000);
    assert.equal(parseNumber(' 42 '), 42);
    for (const bad of [
      '',
      'n/a',
      'N/A',
      '(!) n/a',
      '-',
      '...',
      'PolicySpread',
      '(128, 1, 1)',
      '0,5',
      '1,2',
      '0x7f07e17a4300',
      'NaN',
      'inf',
    ]) {
      assert.equal(parseNumber(bad), null, bad);
    }
    assert.equal(parseNumber(null), null);
    assert.equal(parseNumber(undefined), null);
  });

  test('toNanoseconds: the spellings ncu uses (ns/us/ms/s in 2025.3.1; nsecond/usecond/msecond/second before)', () => {
    assert.equal(toNanoseconds(1.69328, 'ms'), 1693280);
    assert.equal(toNanoseconds(309.28, 'us'), 309280);
    assert.equal(toNanoseconds(13120, 'ns'), 13120);
    assert.equal(toNanoseconds(2, 's'), 2e9);
    assert.equal(toNanoseconds(1.5, 'msecond'), 1500000);
    assert.equal(toNanoseconds(3.25, 'usecond'), 3250);
    assert.equal(toNanoseconds(7, 'nsecond'), 7);
    assert.equal(toNanoseconds(1, 'second'), 1e9);
    assert.equal(toNanoseconds(5, null), 5); // no units row: ncu's base unit
    assert.equal(toNanoseconds(5, 'cycle'), null);
    assert.equal(toNanoseconds(5, 'constructor'), null);
    assert.equal(toNanoseconds(null, 'ms'), null);
  });

  test('parseDim3', () => {
    assert.deepEqual(parseDim3('(128, 1, 1)'), [128, 1, 1]);
    assert.deepEqual(parseDim3('(4096, 1, 1)'), [4096, 1, 1]);
    assert.equal(parseDim3('128'), null);
    assert.equal(parseDim3(''), null);
  });

  test('kernel names: (int) casts of the source page, base names', () => {
    assert.equal(
      normalizeKernelName('void linear<(int)1, (int)0>(const float *, const float *, const float *, float *)'),
      'void linear<1, 0>(const float *, const float *, const float *, float *)',
    );
    assert.equal(normalizeKernelName('void k<(unsigned int)4, (bool)1>(int)'), 'void k<4, 1>(int)');
    assert.equal(kernelBaseName('void scale<4>(float *, int, float, int)'), 'scale');
    assert.equal(kernelBaseName('accumulate(float *, int, int)'), 'accumulate');
    assert.equal(kernelBaseName('void ns::inner::k<(int)2>(int)'), 'k');
    assert.equal(kernelBaseName('_Z5scaleILi4EEvPfifi'), '_Z5scaleILi4EEvPfifi');
  });

  test('stall column names of the source page and PC-sampling metrics (fixture headers)', () => {
    const header = read('linear-unroll-inner-full.source-cuda-sass.csv').split('\n')[2];
    const names = header
      .slice(1, -1)
      .split('","')
      .filter(h => h.startsWith('stall_'));
    const got = names.map(n => {
      const c = canonicalStallReason(n);
      return `${c.reason}${c.notIssued ? '*' : ''}`;
    });
    assert.deepEqual(got, [
      'barrier',
      'branch_resolving',
      'dispatch_stall',
      'drain',
      'imc_miss',
      'lg_throttle',
      'long_scoreboard',
      'math_pipe_throttle',
      'membar',
      'mio_throttle',
      'misc',
      'no_instruction',
      'not_selected',
      'selected',
      'short_scoreboard',
      'sleeping',
      'tex_throttle',
      'wait',
      'barrier*',
      'branch_resolving*',
      'dispatch_stall*',
      'drain*',
      'imc_miss*',
      'lg_throttle*',
      'long_scoreboard*',
      'math_pipe_throttle*',
      'membar*',
      'mio_throttle*',
      'misc*',
      'no_instruction*',
      'not_selected*',
      'selected*',
      'short_scoreboard*',
      'sleeping*',
      'tex_throttle*',
      'wait*',
    ]);
    // Every canonical reason is one of the per-issue-active metrics ncu lists (query-metrics-stall.txt).
    const listed = new Set(
      [...read('query-metrics-stall.txt').matchAll(/smsp__average_warps_issue_stalled_(\w+?)_per_issue_active/g)].map(m => m[1]),
    );
    for (const g of got) assert.ok(listed.has(g.replace('*', '')), g);
    assert.deepEqual(canonicalStallReason('no_instructions_not_issued'), { reason: 'no_instruction', notIssued: true });
    assert.deepEqual(canonicalStallReason('stall_gmma'), { reason: 'gmma', notIssued: false });
    assert.deepEqual(canonicalStallReason('warpgroup_arrive'), { reason: 'warpgroup_arrive', notIssued: false });
  });
});

describe('parseRawPage: H200 fixtures', () => {
  // python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print({n:(r[1][i],r[2][i]) for i,n in
  //   enumerate(r[0]) if n in ('Kernel Name','Block Size','Grid Size','gpu__time_duration.sum',
  //   'smsp__inst_executed.sum','launch__registers_per_thread') or 'stalled_no_instruction_per' in n})" FILE.raw.csv
  const cases: [string, string, string, number, number][] = [
    ['hot-loop-32KiB', 'void hot<512>(float *, int, float, float)', 'ms', 1.69328, 0.156695],
    ['hot-loop-256KiB', 'void hot<4096>(float *, int, float, float)', 'ms', 7.376224, 4.243906],
    ['linear-unroll-inner-full', 'void linear<1, 0>(const float *, const float *, const float *, float *)', 'us', 309.28, 0.075857],
    ['linear-unroll-outer-full', 'void linear<0, 1>(const float *, const float *, const float *, float *)', 'ms', 1.658688, 0.411234],
  ];
  for (const [file, name, unit, duration, noInst] of cases) {
    test(`${file}: one launch, identity columns, units row, values`, () => {
      const page = parseRawPage(read(`${file}.raw.csv`));
      assert.equal(page.kernels.length, 1);
      const k = page.kernels[0];
      assert.equal(k.id, 0);
      assert.equal(k.kernelName, name);
      assert.equal(k.cc, '9.0');
      assert.equal(k.device, 0);
      assert.equal(k.stream, 7);
      assert.deepEqual(k.blockSize, [128, 1, 1]);
      assert.deepEqual(k.gridSize, file.startsWith('hot') ? [132, 1, 1] : [1, 1, 1]);
      assert.deepEqual(k.metrics['gpu__time_duration.sum'], { value: duration, text: duration.toFixed(6), unit });
      assert.equal(k.metrics['smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio'].value, noInst);
      assert.equal(k.metrics['smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio'].unit, 'inst');
      assert.equal(k.metrics['launch__registers_per_thread'].unit, 'register/thread');
      // Identity columns are not metrics; the units row is not a launch.
      assert.equal(k.metrics['Kernel Name'], undefined);
      assert.ok(!page.metricNames.includes('ID'));
    });
  }

  test('thousands separators and unitless columns (device attributes)', () => {
    const k = parseRawPage(read('hot-loop-32KiB.raw.csv')).kernels[0];
    // python3 -c "...print({n:(r[1][i],r[2][i]) for i,n in enumerate(r[0]) if n=='device__attribute_total_memory'})"
    assert.deepEqual(k.metrics['device__attribute_total_memory'], { value: 150109880320, text: '150,109,880,320', unit: null });
    assert.deepEqual(k.metrics['launch__cluster_scheduling_policy'], { value: null, text: 'PolicySpread', unit: null });
    assert.deepEqual(k.metrics['launch__kernel_name'], { value: null, text: '', unit: null });
    assert.equal(k.processId, 471);
    assert.equal(k.processName, 'icache');
  });

  test('live ncu stdout: ==WARNING==/==PROF== lines and program output before the CSV, three launches (H100)', () => {
    const text = read('mini/mini-raw-live.stdout.txt');
    assert.match(text, /^==WARNING== Note: Running with unmodified GPU clocks/);
    assert.match(text, /^kernel=scale<4> done$/m);
    const page = parseRawPage(text);
    // grep '^"[0-9]' mini/mini-raw-live.stdout.txt | cut -d, -f1,5 ; python3 csv → gpu__time_duration.sum ('ns', '13,120' …)
    assert.deepEqual(
      page.kernels.map(k => [k.id, k.kernelName, k.metrics['gpu__time_duration.sum'].text, k.metrics['gpu__time_duration.sum'].unit]),
      [
        [0, 'void scale<4>(float *, int, float, int)', '13,120', 'ns'],
        [1, 'void scale<16>(float *, int, float, int)', '13,216', 'ns'],
        [2, 'accumulate(float *, int, int)', '43,520', 'ns'],
      ],
    );
    assert.deepEqual(
      page.kernels.map(k => k.metrics['smsp__inst_executed.sum'].value),
      [9928704, 9699328, 36306944],
    );
    assert.deepEqual(
      page.kernels.map(k => k.metrics['sm__warps_active.avg.pct_of_peak_sustained_active'].value),
      [83.27, 83.34, 87.28],
    );
    assert.deepEqual(
      page.kernels.map(k => k.gridSize),
      [
        [4096, 1, 1],
        [4096, 1, 1],
        [8192, 1, 1],
      ],
    );
  });

  test('hand-written: n/a, empty cells, no units row, a repeated header, noise rows, CRLF', () => {
    const text = [
      '==PROF== Connected to process 1 (/x)',
      'program says "hello',
      '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","m.a"',
      '"0","1","x","h","k(int)","1","7","(32, 1, 1)","(2, 1, 1)","0","8.0","1,234.5","n/a"',
      'garbage line',
      '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","m.a"',
      '"","","","","","","","","","","","usecond",""',
      '"1","1","x","h","k2(int)","1","7","(32, 1, 1)","(2, 1, 1)","0","8.0","2","",',
      '==PROF== Disconnected from process 1',
    ].join('\r\n');
    const page = parseRawPage(text);
    assert.equal(page.kernels.length, 2);
    assert.deepEqual(page.kernels[0].metrics['gpu__time_duration.sum'], { value: 1234.5, text: '1,234.5', unit: null });
    assert.deepEqual(page.kernels[0].metrics['m.a'], { value: null, text: 'n/a', unit: null });
    assert.deepEqual(page.kernels[1].metrics['gpu__time_duration.sum'], { value: 2, text: '2', unit: 'usecond' });
    assert.deepEqual(page.kernels[1].metrics['m.a'], { value: null, text: '', unit: null });
    assert.equal(page.kernels[1].kernelName, 'k2(int)');
  });

  test('stripNcuLogLines keeps everything but ncu message lines', () => {
    const text = '==PROF== a\nkeep 1\n  ==WARNING== b\n==ERROR== c\n"x","==PROF== inside a cell"\n==INFO== d\n';
    assert.equal(stripNcuLogLines(text), 'keep 1\n"x","==PROF== inside a cell"\n');
  });
});

describe('parseDetailsPage', () => {
  test('H200: sections in order, metric units and values, rules with speedup', () => {
    const page = parseDetailsPage(read('linear-unroll-inner-full.details.csv'));
    assert.equal(page.kernels.length, 1);
    const k = page.kernels[0];
    assert.equal(k.kernelName, 'void linear<1, 0>(const float *, const float *, const float *, float *)');
    assert.deepEqual(k.blockSize, [128, 1, 1]);
    // cut -d, -f12- linear-unroll-inner-full.details.csv | awk -F'","' '{print $1}' | uniq -c
    assert.deepEqual(
      k.sections.map(s => [s.name, s.metrics.length, s.rules.length]),
      [
        ['Command line profiler metrics', 23, 0],
        ['Warp State Statistics', 4, 0],
        ['WarpStateStats', 0, 2],
        ['Source Counters', 4, 0],
      ],
    );
    const cmd = k.sections[0].metrics;
    assert.deepEqual(cmd[0], { name: 'gpu__time_duration.sum', unit: 'us', value: 309.28, text: '309.28' });
    assert.deepEqual(
      cmd.find(m => m.name === 'smsp__inst_executed.sum'),
      { name: 'smsp__inst_executed.sum', unit: 'inst', value: 121040, text: '121,040' },
    );
    assert.deepEqual(k.sections[1].metrics[2], { name: 'Avg. Active Threads Per Warp', unit: null, value: 32, text: '32' });
    const [opt, inf] = k.sections[2].rules;
    assert.equal(opt.name, 'CPIStall');
    assert.equal(opt.type, 'OPT');
    assert.match(opt.description, /^On average, each warp of this workload spends 11\.9 cycles being stalled/);
    assert.equal(opt.speedupType, 'local');
    assert.equal(opt.speedup, 78.58);
    assert.equal(inf.type, 'INF');
    assert.equal(inf.speedup, null);
    assert.equal(inf.speedupType, null);
    assert.equal(detailsMetrics(k)['Branch Instructions'].value, 1796);
  });

  test('H100: three launches of two kernels, one entry each', () => {
    const page = parseDetailsPage(read('mini/mini-details.stdout.txt'));
    // cut -d, -f1,5 mini/mini-details.stdout.txt | sort | uniq -c
    assert.deepEqual(
      page.kernels.map(k => [k.id, k.kernelName]),
      [
        [0, 'void scale<4>(float *, int, float, int)'],
        [1, 'void scale<16>(float *, int, float, int)'],
        [2, 'accumulate(float *, int, int)'],
      ],
    );
    for (const k of page.kernels) {
      assert.deepEqual(
        k.sections.map(s => s.name),
        ['Command line profiler metrics', 'Warp State Statistics', 'Launch Statistics', 'LaunchStats', 'Occupancy', 'Source Counters'],
      );
    }
    // grep '"2",.*gpu__time_duration.sum' mini/mini-details.stdout.txt → "us","43.46"
    assert.deepEqual(detailsMetrics(page.kernels[2])['gpu__time_duration.sum'], { value: 43.46, text: '43.46', unit: 'us' });
    assert.equal(detailsMetrics(page.kernels[0])['launch__thread_count'].value, 1048576);
  });

  test('--print-summary per-kernel: no ID, invocations, Average as the value', () => {
    const page = parseDetailsPage(read('mini/mini-summary-per-kernel.stdout.txt'));
    assert.deepEqual(
      page.kernels.map(k => [k.id, k.kernelName, k.invocations]),
      [
        [null, 'accumulate(float *, int, int)', 1],
        [null, 'void scale<16>(float *, int, float, int)', 1],
        [null, 'void scale<4>(float *, int, float, int)', 1],
      ],
    );
    assert.equal(detailsMetrics(page.kernels[0])['gpu__time_duration.sum'].value, 43.46);
  });
});

describe('parseSourcePage', () => {
  test('H200 cuda,sass: line rows with totals, SASS rows under their line, stall columns per reason', () => {
    const page = parseSourcePage(read('linear-unroll-inner-full.source-cuda-sass.csv'));
    assert.equal(page.functions.length, 1);
    const f = page.functions[0];
    assert.equal(f.view, 'cuda,sass');
    assert.equal(f.file, '/home/dev/kernels/bloat.cu');
    assert.equal(f.function, 'void linear<(int)1, (int)0>(const float *, const float *, const float *, float *)');
    assert.equal(f.kernelName, f.function);
    // python3 -c "import csv,sys;r=list(csv.reader(open(sys.argv[1])));h=r[2];print([(x[0],x[4],x[5],x[7],
    //   {h[i]:x[i] for i in range(33,len(h)) if x[i]!='0'}) for x in r[3:] if x[0]])" linear-unroll-inner-full.source-cuda-sass.csv
    assert.deepEqual(
      f.rows.map(r => [r.line, r.samples, r.samplesNotIssued, r.instructionsExecuted]),
      [
        [11, 0, 0, 4],
        [14, 0, 0, 784],
        [17, 3, 3, 3956],
        [19, 25, 23, 16640],
        [20, 0, 0, 256],
        [23, 7, 4, 17152],
        [25, 191, 180, 81920],
        [27, 0, 0, 256],
        [30, 0, 0, 68],
        [31, 0, 0, 4],
      ],
    );
    const l25 = f.rows.find(r => r.line === 25)!;
    assert.equal(l25.source, 'for (int r = 0; r < 4; r++) acc[r] += xs[mh * 4 + r][kk] * w;');
    assert.deepEqual(l25.stalls, { dispatch_stall: 2, long_scoreboard: 163, selected: 9, short_scoreboard: 7, wait: 10 });
    assert.deepEqual(l25.stallsNotIssued, { long_scoreboard: 163, short_scoreboard: 7, wait: 10 });
    // 568 SASS rows (127 "..." gap rows skipped); their samples add up to the line totals and to
    // smsp__pcsamp_sample_count (226) of the raw page.
    assert.equal(f.sass.length, 568);
    assert.equal(
      f.sass.reduce((a, r) => a + r.samples, 0),
      226,
    );
    assert.equal(
      f.rows.reduce((a, r) => a + r.samples, 0),
      226,
    );
    assert.deepEqual(f.sass[0], {
      line: 11,
      address: '0x7f07e17a4300',
      source: 'LDC R1, c[0x0][0x28]',
      samples: 0,
      samplesNotIssued: 0,
      instructionsExecuted: 4,
      stalls: {},
      stallsNotIssued: {},
    });
    for (const line of [...new Set(f.sass.map(s => s.line))]) {
      const own = f.sass.filter(s => s.line === line).reduce((a, s) => a + s.samples, 0);
      assert.equal(own, f.rows.find(r => r.line === line)!.samples, `line ${line}`);
    }
  });

  test('every row: per-reason samples add up to the sample totals', () => {
    for (const file of [
      'linear-unroll-inner-full.source-cuda-sass.csv',
      'mini/mini-source-cuda-sass.accumulate.stdout.txt',
      'mini/mini-source-sass.accumulate.stdout.txt',
    ]) {
      for (const f of parseSourcePage(read(file)).functions) {
        for (const r of [...f.rows, ...f.sass]) {
          const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
          assert.equal(sum(r.stalls), r.samples, `${file} ${r.line ?? r.address}`);
          assert.equal(sum(r.stallsNotIssued), r.samplesNotIssued, `${file} ${r.line ?? r.address}`);
        }
      }
    }
  });

  test('H100 cuda,sass: one block per file for a kernel with an inlined header function; repeated SASS rows once', () => {
    const page = parseSourcePage(read('mini/mini-source-cuda-sass.accumulate.stdout.txt'));
    // python3 (split each line on '","') → (line, samples, not issued, instructions) per File Path block
    assert.deepEqual(
      page.functions.map(f => [f.file, f.function, f.rows.map(r => [r.line, r.samples, r.samplesNotIssued, r.instructionsExecuted])]),
      [
        [
          '/work/main/test/fixtures/ncu/capture/mini.cu',
          'accumulate(float *, int, int)',
          [
            [23, 34, 25, 32768],
            [25, 9, 4, 131072],
            [26, 11, 0, 98304],
            [27, 11, 1, 98304],
            [28, 3053, 409, 4390912],
            [29, 5, 0, 32768],
            [30, 33, 12, 32768],
          ],
        ],
        ['/work/main/test/fixtures/ncu/capture/mini_helper.cuh', 'accumulate(float *, int, int)', [[5, 4949, 679, 32014336]]],
      ],
    );
    for (const f of page.functions) {
      const addrs = f.sass.map(s => s.address);
      assert.equal(new Set(addrs).size, addrs.length);
      assert.equal(
        f.sass.reduce((a, r) => a + r.samples, 0),
        f.rows.reduce((a, r) => a + r.samples, 0),
      );
    }
  });

  test('H100 sass: the kernel ncu printed twice comes back once, addresses in order', () => {
    const text = read('mini/mini-source-sass.accumulate.stdout.txt');
    assert.equal(text.match(/^"Kernel Name"/gm)!.length, 2);
    const page = parseSourcePage(text);
    assert.equal(page.functions.length, 1);
    const f = page.functions[0];
    assert.equal(f.view, 'sass');
    assert.equal(f.kernelName, 'accumulate(float *, int, int)');
    assert.equal(f.file, undefined);
    assert.ok(f.rows.length === f.sass.length && f.rows.every((r, i) => r === f.sass[i]));
    // The two blocks are byte-identical; the first one:
    // awk -F'","' '/^"Kernel Name"/ {b++} b==1 && /^"0x/ {n++; s+=$3} END {print n, s}' mini/mini-source-sass.accumulate.stdout.txt
    //   → 176 5221 (= the cuda,sass page's 3156 + 4949 samples on mini.cu and mini_helper.cuh)
    assert.equal(f.rows.length, 176);
    assert.equal(
      f.rows.reduce((a, r) => a + r.samples, 0),
      5221,
    );
    assert.equal(f.rows[0].address, '0x7fb5d97af300');
    assert.equal(f.rows[0].source, 'LDC R1, c[0x0][0x28]');
    assert.ok(f.rows.every(r => r.line === undefined && /^0x[0-9a-f]+$/.test(r.address!)));
  });

  test('hand-written sass page: thousands separators, n/a, dashes, legacy stall names', () => {
    const text = [
      '"Kernel Name","void k<(int)1>(float *)",',
      '"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","# Samples","Instructions Executed","stall_long_sb","stall_no_inst","stall_long_sb (Not Issued)"',
      '"0x10","      LDG.E R2, desc[UR4][R2.64]","1,204","1,200","1,204","4","1,200","4","1,200"',
      '"0x20","      EXIT","n/a","","-","-","-","-","-"',
    ].join('\n');
    const f = parseSourcePage(text).functions[0];
    assert.equal(f.kernelName, 'void k<(int)1>(float *)');
    assert.deepEqual(
      f.rows.map(r => [r.address, r.source, r.samples, r.samplesNotIssued, r.instructionsExecuted, r.stalls, r.stallsNotIssued]),
      [
        ['0x10', 'LDG.E R2, desc[UR4][R2.64]', 1204, 1200, 4, { long_scoreboard: 1200, no_instruction: 4 }, { long_scoreboard: 1200 }],
        ['0x20', 'EXIT', 0, 0, null, {}, {}],
      ],
    );
  });

  test('--print-source cuda: unescaped quotes in source text', () => {
    const page = parseSourcePage(read('mini/mini-source-cuda.stdout.txt'));
    assert.equal(page.functions.length, 1);
    const f = page.functions[0];
    assert.equal(f.view, 'cuda');
    assert.equal(f.file, '/work/main/test/fixtures/ncu/capture/mini.cu');
    assert.equal(f.rows.length, 59);
    const src = fs.readFileSync(path.join(FIXTURES, 'capture', 'mini.cu'), 'utf8').split('\n');
    // ncu prints each line with its indentation; the parser trims.
    for (const r of f.rows) assert.equal(r.source, src[r.line! - 1].trim(), `line ${r.line}`);
    assert.equal(f.rows[7].source, '#include "mini_helper.cuh"');
    assert.equal(f.rows[34].source, 'fprintf(stderr, "CUDA error: %s: %s\\n", what, cudaGetErrorString(e));');
  });
});

describe('garbage in, no throw', () => {
  const inputs: unknown[] = [
    '',
    '\n\n',
    '"',
    '"""',
    ',,,',
    '"ID"',
    '"ID",\n"",\n"x"',
    '==PROF== only\n==ERROR== lines',
    '"Kernel Name"\n"Address","Source"\n"0x1"',
    '"Line No","Source"\n"abc","x"\n"","","",""',
    'a,"b\n',
    '\u0000\u0001\uFFFF',
    'x'.repeat(10000),
    '"' + ','.repeat(500),
    null,
    undefined,
    42,
    {},
  ];
  // A deterministic pseudo-random mix of CSV-ish characters.
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const alphabet = [
    '"',
    ',',
    '\n',
    '\r',
    'ID',
    'Kernel Name',
    'Address',
    'Line No',
    'Source',
    '0x10',
    '1,234',
    'n/a',
    '==PROF== x\n',
    'stall_no_inst',
    ' ',
  ];
  for (let i = 0; i < 300; i++) {
    let s = '';
    const len = Math.floor(rnd() * 60);
    for (let j = 0; j < len; j++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    inputs.push(s);
  }
  // Real files cut at arbitrary points.
  for (const f of ['hot-loop-32KiB.raw.csv', 'linear-unroll-inner-full.details.csv', 'linear-unroll-inner-full.source-cuda-sass.csv']) {
    const t = read(f);
    for (const cut of [1, 17, 100, 1000, 5000, Math.floor(t.length / 2)]) inputs.push(t.slice(0, cut), t.slice(cut));
  }
  test(`${inputs.length} inputs through every reader`, () => {
    for (const x of inputs) {
      const t = x as string;
      assert.ok(Array.isArray(parseCsv(t)));
      assert.ok(Array.isArray(parseRawPage(t).kernels));
      assert.ok(Array.isArray(parseDetailsPage(t).kernels));
      assert.ok(Array.isArray(parseSourcePage(t).functions));
      parseNumber(t);
      stripNcuLogLines(t);
      normalizeKernelName(t);
      kernelBaseName(t);
      canonicalStallReason(t);
      splitNcuLine(typeof t === 'string' ? t : '');
    }
  });
});
