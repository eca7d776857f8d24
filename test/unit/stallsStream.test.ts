// `unroll-lens stalls` and the bench time stage on incomplete or huge ncu raw pages (issue 10):
// a CSV cut mid-row or garbage is an error (exit 65), never a result; the reader streams, and
// its answer equals the in-memory one on a large synthetic export shaped like a real recording.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { parseRawPage, RawKernelRow } from '../../src/engine/profile/ncuCsv';
import { kernelProfile, stallsJson } from '../../src/engine/profile/stalls';
import { parseRawPageStrict, RawPageError, RawPageStream } from '../../src/engine/profile/rawPageStream';
import { timeVariant } from '../../src/engine/gpu/stages/time';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { ProcessRunner } from '../../src/engine/toolchain/process';
import { REPO_ROOT } from './helpers';
import { writeSyntheticRawPage } from './rawPageSynthetic';

const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'matmul_basic.raw.csv');
const recorded = fs.readFileSync(REC, 'utf8');

async function run(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

function tmp(name: string, text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-stalls-')), name);
  fs.writeFileSync(file, text);
  return file;
}

/** The stalls table as the in-memory reader computed it before streaming (the reference). */
function inMemoryTable(csv: string): string {
  const rows = parseRawPage(csv).kernels;
  const out = stallsJson(rows);
  let text = '';
  const groups = new Map<string, number[]>();
  out.kernels.forEach((k, i) => groups.set(k.name, [...(groups.get(k.name) ?? []), i]));
  for (const [name, idx] of groups) {
    const durations = idx
      .map(i => out.kernels[i].durationNs)
      .filter((d): d is number => d !== null)
      .sort((a, b) => a - b);
    const median = durations.length ? durations[Math.floor(durations.length / 2)] : null;
    const occ = idx.map(i => kernelProfile(rows[i]).achievedOccupancy).filter((x): x is number => x !== null);
    text +=
      `${name}\n  ${idx.length} launch${idx.length === 1 ? '' : 'es'} · median duration ${median !== null ? (median / 1e3).toFixed(2) + ' us' : 'n/a'}` +
      `${occ.length ? ` · achieved occupancy ${(occ.reduce((a, b) => a + b, 0) / occ.length).toFixed(1)}%` : ''}\n`;
    const mean = (reason: string, key: 'stallShare' | 'stalls') =>
      idx.reduce((a, i) => a + (out.kernels[i][key][reason] ?? 0), 0) / idx.length;
    const reasons = Object.keys(out.kernels[idx[0]].stallShare);
    for (const reason of reasons.sort((a, b) => mean(b, 'stallShare') - mean(a, 'stallShare')).slice(0, 6)) {
      text += `  ${reason.padEnd(20)} ${(mean(reason, 'stallShare') * 100).toFixed(1).padStart(5)}%  (${mean(reason, 'stalls').toFixed(2)} cycles per issued instruction)\n`;
    }
  }
  return text;
}

describe('stalls: a cut-off or garbage CSV is an error, never a result', () => {
  test('the recorded page: 20 launches, long_scoreboard 45.5% (same as the in-memory reader)', async () => {
    const r = await run(['stalls', REC]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /20 launches/);
    assert.match(r.out, /long_scoreboard +45\.5%/);
    assert.equal(r.out, inMemoryTable(recorded));
  });

  test('cut mid-row (was: the partial row counted as a launch, long_scoreboard 22.8%) → exit 65 naming the line', async () => {
    // cut inside the last row's stall columns, and inside a quoted cell
    for (const cut of [recorded.length - 1000, recorded.length - 3]) {
      const file = tmp('cut.csv', recorded.slice(0, cut));
      for (const json of [[], ['--json']]) {
        const r = await run(['stalls', file, ...json]);
        assert.equal(r.code, 65, r.err);
        assert.equal(r.out, '', 'nothing printed from an incomplete page');
        assert.match(
          r.err,
          /cut\.csv: (line 22 is not a complete launch row|the CSV ends inside a quoted cell of the row starting on line 22)/,
        );
        assert.match(r.err, /cut off/);
      }
    }
    // a cut exactly at a row's end is a complete (shorter) page
    const whole = tmp('rows.csv', recorded.split('\n').slice(0, 12).join('\n') + '\n');
    const ok = await run(['stalls', whole]);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /10 launches/);
  });

  test('garbage, an empty file, a row with extra cells, text between rows → exit 65', async () => {
    const lines = recorded.split('\n');
    const cases: [string, RegExp][] = [
      ['garbage\nmore garbage\n', /no raw-page header row/],
      ['', /no raw-page header row/],
      [
        [...lines.slice(0, 3), lines[3].replace(/"$/, '","x"'), ''].join('\n'),
        /line 4 is not a complete launch row \(301 cells; the header has 300 columns\)/,
      ],
      [
        [...lines.slice(0, 3), 'Segmentation fault (core dumped)', ...lines.slice(3)].join('\n'),
        /line 4 is not a complete launch row \("Segmentation fault/,
      ],
    ];
    for (const [text, message] of cases) {
      const r = await run(['stalls', tmp('bad.csv', text)]);
      assert.equal(r.code, 65, r.err);
      assert.match(r.err, message);
      assert.equal(r.out, '');
    }
    // a header and no launch: the old message, exit 2
    const none = await run(['stalls', tmp('none.csv', lines.slice(0, 2).join('\n') + '\n')]);
    assert.equal(none.code, 2);
    assert.match(none.err, /no profiled kernels found/);
  });

  test('the strict reader keeps what the lenient one allows: ncu messages, BOM, CRLF, trailing comma, repeated header', () => {
    const lines = recorded.split('\n').filter(Boolean);
    const text =
      '\uFEFF==PROF== Connected to process 1\r\nprogram output "with a quote\r\n' +
      [lines[0], lines[1], lines[2] + ',', '==WARNING== something', lines[0], lines[3]].join('\r\n') +
      '\r\n';
    const strict = parseRawPageStrict(text).kernels;
    assert.deepEqual(strict, parseRawPage(text).kernels);
    assert.equal(strict.length, 2);
    // chunked at every size gives the same rows
    for (const size of [1, 7, 1000]) {
      const rows: RawKernelRow[] = [];
      const s = new RawPageStream({ onLaunch: r => rows.push(r) });
      for (let i = 0; i < text.length; i += size) s.push(text.slice(i, i + size));
      s.end();
      assert.deepEqual(rows, strict, `chunks of ${size}`);
    }
    assert.throws(() => parseRawPageStrict(recorded.slice(0, -500)), RawPageError);
  });

  test('a FIFO named .csv is refused, not read (it would block)', async t => {
    if (process.platform === 'win32') return t.skip('no mkfifo');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-fifo-'));
    const fifo = path.join(dir, 'r.csv');
    execFileSync('mkfifo', [fifo]);
    const r = await run(['stalls', fifo]);
    assert.equal(r.code, 2);
    assert.match(r.err, /r\.csv is a FIFO \(named pipe\), not a regular file/);
  });
});

describe('stalls streams: the answer on a large export equals the in-memory one', () => {
  test('~24 MB synthetic page (9000+ launches of two kernels): table and --json byte-equal', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-big-'));
    const file = path.join(dir, 'big.csv');
    const launches = writeSyntheticRawPage(file, 24 * 2 ** 20);
    assert.ok(launches > 8000, String(launches));
    const text = fs.readFileSync(file, 'utf8');
    const table = await run(['stalls', file]);
    assert.equal(table.code, 0, table.err);
    assert.equal(table.out, inMemoryTable(text));
    assert.match(table.out, new RegExp(`${launches / 2} launches`));
    const json = await run(['stalls', file, '--json']);
    assert.equal(json.code, 0, json.err);
    assert.equal(json.out, JSON.stringify(stallsJson(parseRawPage(text).kernels), null, 2) + '\n');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('bench time stage: a truncated raw page from ncu is a profile failure, not ok with empty stalls', () => {
  test('status profile with a message naming the problem', async () => {
    const runner: ProcessRunner = async (cmd, args) => ({
      command: cmd,
      args,
      exitCode: 0,
      signal: null,
      // a page cut short, read back from a report (--import) or printed by ncu itself (--csv, no --export)
      stdout:
        args.includes('--import') || (args.includes('--csv') && !args.includes('--export'))
          ? recorded.slice(0, recorded.length - 1000)
          : '',
      stderr: '',
      timedOut: false,
      cancelled: false,
      durationMs: 1,
    });
    const toolchain = { runner, ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' } } as unknown as Toolchain;
    const kernel = '_Z12matmul_basicPKfS0_Pfi';
    for (const keepReportsDir of [undefined, fs.mkdtempSync(path.join(os.tmpdir(), 'ul-kept-'))]) {
      const r = await timeVariant(
        { label: 'as-written', program: '/fake/prog', file: '/tmp/x.cu' },
        { kernel, kernels: [kernel] },
        { toolchain, launcher: [], args: [], samples: 20, warmup: 0, clockControl: 'none', timeoutMs: 1000, loops: [1], keepReportsDir },
      );
      assert.equal(r.status, 'profile', String(keepReportsDir));
      assert.match(r.message!, keepReportsDir ? /\(0-time-0\.ncu-rep\)/ : /\(printed after the program\)/);
      assert.match(r.message!, /could not read ncu's raw page .*line 22 is not a complete launch row/);
      assert.equal(r.groups.size, 0);
    }
  });
});
