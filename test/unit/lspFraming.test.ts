// The stdio server's framing (issue 23): a malformed Content-Length left the server alive but deaf.
// The built server is spawned with --stdio for the end-to-end cases (it must answer a good
// message, then exit within a couple of seconds on a bad one, saying why); the frame guard itself
// is fuzzed in-process with fast-check: it never throws anything but LspFrameError, never holds
// more than one header block and one body, passes good frames unchanged and rejects bad ones.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'child_process';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { LspFrameError, LspFrameGuard, parseHeader } from '../../src/server/lspFraming';
import fc from 'fast-check';
import { propertyRuns } from './propertyRuns';

const SERVER = path.join(REPO_ROOT, 'out', 'src', 'server', 'main.js');

function frame(body: string): Buffer {
  const b = Buffer.from(body, 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]);
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { processId: null, rootUri: null, capabilities: {} },
});

/** Spawns the server, writes `input` (after an initialize that must be answered), and reports how it ended. */
function drive(
  bad: Buffer | null,
  ms = 4000,
): Promise<{ code: number | null; signal: string | null; stderr: string; answered: boolean; ms: number }> {
  return new Promise(resolve => {
    const p = spawn(process.execPath, [SERVER, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let answered = false;
    let start = 0;
    p.stdout.on('data', d => {
      stdout += String(d);
      if (!answered && /"id":1/.test(stdout) && /"capabilities"/.test(stdout)) {
        answered = true;
        start = performance.now();
        if (bad) p.stdin.write(bad);
        else p.kill('SIGTERM');
      }
    });
    p.stderr.on('data', d => (stderr += String(d)));
    p.stdin.on('error', () => undefined);
    const timer = setTimeout(() => p.kill('SIGKILL'), ms + 10_000);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr, answered, ms: start ? performance.now() - start : -1 });
    });
    p.stdin.write(frame(INITIALIZE));
  });
}

// Each case is its own server process: run side by side.
describe('the stdio server on malformed headers', { concurrency: true }, () => {
  test('a good initialize is answered over the guarded stdio', async () => {
    const r = await drive(null);
    assert.ok(r.answered, r.stderr);
  });

  for (const [name, bad, why] of [
    ['a non-numeric Content-Length', 'Content-Length: abc\r\n\r\n{}', /Content-Length "abc" is not a byte count/],
    ['a negative Content-Length', 'Content-Length: -5\r\n\r\n{}', /Content-Length "-5" is not a byte count/],
    ['a huge Content-Length', 'Content-Length: 99999999999999\r\n\r\n{}', /Content-Length 99999999999999 is out of range/],
    ['two Content-Lengths', 'Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}', /more than one Content-Length/],
    ['a header line without a colon', 'garbage\r\n\r\n{}', /malformed message header line "garbage"/],
    ['a header that never ends', 'Content-Length: 2' + 'x'.repeat(20_000), /no end of the message header within 8192 bytes/],
  ] as const) {
    test(`${name}: the server says why and exits within 2 s (not alive and deaf)`, async () => {
      const r = await drive(Buffer.from(bad, 'latin1'));
      assert.ok(r.answered, `the first, good message was not answered: ${r.stderr}`);
      assert.notEqual(r.signal, 'SIGKILL', `the server was still running: ${r.stderr}`);
      assert.equal(r.code, 1);
      assert.ok(r.ms < 2000, `exited after ${r.ms} ms`);
      assert.match(r.stderr, /Unroll Lens server: the client's message stream is broken/);
      assert.match(r.stderr, why);
    });
  }

  test('a result file on /dev/zero asked over stdio ("open result"): an error answer, the server stays up', async () => {
    const p = spawn(process.execPath, [SERVER, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    const reply = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer; got ${stdout.slice(0, 500)}`)), 30_000);
      p.stdout.on('data', d => {
        stdout += String(d);
        const m = /\{[^\n]*"id":2[^\n]*?\}(?=Content-Length|$)/.exec(stdout);
        if (/"id":2/.test(stdout)) {
          clearTimeout(timer);
          resolve(m?.[0] ?? stdout);
        }
      });
    });
    p.stdin.write(frame(INITIALIZE));
    p.stdin.write(frame(JSON.stringify({ jsonrpc: '2.0', method: 'initialized', params: {} })));
    p.stdin.write(frame(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'unrollLens/loadResult', params: { path: '/dev/zero' } })));
    try {
      assert.match(await reply, /character device, not a regular file/);
      assert.equal(p.exitCode, null);
    } finally {
      p.kill('SIGKILL');
    }
  });
});

const NAMES = [
  'Content-Length',
  'content-length',
  'CONTENT-LENGTH',
  'Content-Type',
  'X-Other',
  'Content-Length ',
  ' Content-Length',
  'Con tent',
];
const ODD_LENGTHS = ['', '0', '00', '1e3', '0x10', '12abc', ' 12', '12 ', '+5', '-0', 'NaN', 'Infinity', '1.5', '٣', '4294967297'];

/** Printable ASCII. */
const ascii = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });
const bytes = (maxLength: number) => fc.uint8Array({ maxLength }).map(b => Buffer.from(b));

/** A Content-Length value: small, negative, huge, odd spellings or junk. */
const lengthValue: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 0, max: 400 }).map(String),
  fc.integer({ min: 1, max: 1000 }).map(n => String(-n)),
  fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 9, max: 40 })).map(([d, zeros]) => String(d) + '0'.repeat(zeros)),
  fc.constantFrom(...ODD_LENGTHS),
  ascii(12),
);

const anyHeaderLine: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom('', ' ', '  ', '\t'), lengthValue).map(([n, ws, v]) => `${n}:${ws}${v}`),
    weight: 3,
  },
  {
    arbitrary: fc.constantFrom(
      'Content-Type: application/vscode-jsonrpc; charset=utf-8',
      'Content-Type: x; charset=latin1',
      'nocolon',
      ':',
    ),
    weight: 1,
  },
  { arbitrary: bytes(20).map(b => b.toString('latin1').replace(/\r|\n/g, ' ')), weight: 1 },
  { arbitrary: ascii(30), weight: 1 },
);
/**
 * One header line; never empty (an empty line ends the header block). As the bytes sent read back:
 * the block is sent as latin1, which keeps only the low byte of a wider character ("٣" goes out
 * as "c"), and the oracle must judge what the guard receives.
 */
const headerLine = anyHeaderLine.map(l => Buffer.from(l || 'nocolon', 'latin1').toString('latin1'));

/** What the guard should do with one header block: the body length, or a rejection. */
function expected(lines: string[], maxBody: number): number | 'reject' {
  let length: number | null = null;
  for (const line of lines) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (!m || /[^\x20-\x7e\t]/.test(line)) return 'reject';
    const name = m[1].toLowerCase();
    if (name === 'content-length') {
      if (length !== null || !/^[0-9]+$/.test(m[2])) return 'reject';
      length = Number(m[2]);
      if (length < 1 || length > maxBody) return 'reject';
    } else if (name === 'content-type') {
      const cs = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(m[2])?.[1].toLowerCase();
      if (cs !== undefined && cs !== 'utf-8' && cs !== 'utf8') return 'reject';
    }
  }
  return length ?? 'reject';
}

/** A value with up to 6 points to split its bytes at, as a pipe would deliver them. */
function withCuts<T>(value: fc.Arbitrary<T>, bytesOf: (v: T) => Buffer): fc.Arbitrary<[T, number[]]> {
  return value.chain(v => fc.tuple(fc.constant(v), fc.array(fc.integer({ min: 0, max: bytesOf(v).length }), { maxLength: 6 })));
}

/** Splits `bytes` at the cut points. */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts)].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

/** Each property runs in well under a second; the budget bounds shrinking. */
const params = (numRuns: number) => propertyRuns(numRuns, 0x5eed, 60_000);

describe('frame guard (fast-check cases)', () => {
  const MAX_BODY = 256;
  const MAX_HEADER = 512;

  test('random header blocks and bodies, in random chunks: accepted exactly when well formed, never throws otherwise, never buffers past its budget', () => {
    const inputOf = ({ lines, body }: { lines: string[]; body: Buffer }) =>
      Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), body]);
    const cases = withCuts(fc.record({ lines: fc.array(headerLine, { maxLength: 4 }), body: bytes(300) }), inputOf);
    fc.assert(
      fc.property(cases, ([{ lines, body }, cuts]) => {
        const g = new LspFrameGuard(MAX_BODY, MAX_HEADER);
        const headerText = lines.join('\r\n');
        const input = inputOf({ lines, body });
        const want = headerText.length > MAX_HEADER ? 'reject' : expected(lines, MAX_BODY);
        const frames: Buffer[] = [];
        let rejected: unknown = null;
        for (const c of chunked(input, cuts)) {
          try {
            frames.push(...g.push(c));
          } catch (e) {
            rejected = e;
            break;
          }
          assert.ok(g.buffered <= MAX_HEADER + 4 + MAX_BODY, `buffered ${g.buffered}`);
        }
        if (rejected !== null) assert.ok(rejected instanceof LspFrameError, String(rejected));
        if (want === 'reject') {
          assert.ok(rejected, `accepted ${JSON.stringify(lines)}`);
          assert.equal(frames.length, 0);
          // Once broken, always broken: nothing after it is taken as a message.
          assert.throws(() => g.push(frame('{}')), LspFrameError);
        } else {
          assert.equal(rejected, null, `rejected ${JSON.stringify(lines)}: ${rejected}`);
          if (body.length >= want) {
            assert.equal(frames.length, 1);
            assert.deepEqual(frames[0], Buffer.concat([Buffer.from(`Content-Length: ${want}\r\n\r\n`), body.subarray(0, want)]));
            assert.equal(g.buffered, body.length - want);
          } else {
            assert.equal(frames.length, 0);
            assert.equal(g.buffered, body.length);
          }
        }
      }),
      params(2000),
    );
  });

  test('random byte streams: only LspFrameError, buffered bytes bounded, every frame it returns is well formed', () => {
    const chunk = fc.oneof(
      { arbitrary: bytes(64), weight: 2 },
      { arbitrary: ascii(40).map(s => Buffer.from(s)), weight: 1 },
      { arbitrary: lengthValue.map(v => Buffer.from(`Content-Length: ${v}\r\n\r\n`)), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 12 }), chunks => {
        const g = new LspFrameGuard(MAX_BODY, MAX_HEADER);
        for (const c of chunks) {
          let frames: Buffer[];
          try {
            frames = g.push(c);
          } catch (e) {
            assert.ok(e instanceof LspFrameError, String(e));
            return;
          }
          assert.ok(g.buffered <= MAX_HEADER + 4 + MAX_BODY);
          for (const f of frames) {
            const end = f.indexOf('\r\n\r\n');
            assert.equal(parseHeader(f.subarray(0, end).toString('latin1'), MAX_BODY), f.length - end - 4);
          }
        }
      }),
      params(600),
    );
  });

  test('sequences of good frames in random chunks come out whole and in order', () => {
    const body = fc
      .record({ id: fc.integer({ min: 0, max: 1e6 }), method: ascii(20), text: ascii(200) })
      .map(({ id, method, text }) => JSON.stringify({ jsonrpc: '2.0', id, method, params: { text: text + 'é✓' } }));
    const inputOf = (bodies: string[]) => Buffer.concat(bodies.map(frame));
    fc.assert(
      fc.property(withCuts(fc.array(body, { minLength: 1, maxLength: 5 }), inputOf), ([bodies, cuts]) => {
        const g = new LspFrameGuard();
        const input = inputOf(bodies);
        const out = chunked(input, cuts).flatMap(c => g.push(c));
        assert.deepEqual(Buffer.concat(out), input);
        assert.equal(out.length, bodies.length);
        assert.equal(g.buffered, 0);
      }),
      params(400),
    );
  });
});
