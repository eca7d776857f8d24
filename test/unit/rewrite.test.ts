import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze } from './helpers';
import { makeVariantBytes, makeVariantSource, variantSource, variantKey, VariantError } from '../../src/engine/variants/rewrite';
import { UnrollFactor, UnrollFactors, writtenFactor } from '../../src/engine/variants/factors';

const SRC = `__global__ void k(float* a, int n) {
  #pragma unroll 4
  for (int i = 0; i < n; ++i) a[i] = 0;
  for (int j = 0; j < n; ++j) a[j] += 1;
  _Pragma("unroll") for (int m = 0; m < 8; ++m) a[m] *= 2;
}
`;

describe('variant sources', () => {
  test('lines never move; #line names the original file', async () => {
    const a = await analyze(SRC);
    for (const f of ['default', 1, 2, 'full'] as const) {
      const out = makeVariantSource(
        SRC,
        a,
        new Map<number, UnrollFactor>([
          [3, f],
          [4, f],
          [5, f],
        ]),
        '/abs/k.cu',
      );
      const lines = out.split('\n');
      assert.equal(lines[0], '#line 1 "/abs/k.cu"');
      assert.equal(lines.length - 1, SRC.split('\n').length, 'same line count after the #line directive');
      // every loop keyword is still on its original line
      for (const [line, word] of [
        [3, 'for (int i'],
        [4, 'for (int j'],
        [5, 'for (int m'],
      ] as const) {
        assert.ok(lines[line].includes(word), `${f}: line ${line}: ${lines[line]}`);
      }
    }
  });

  test("replace a directive, insert on an unpragma'd loop, keep the operator form, remove for default", async () => {
    const a = await analyze(SRC);
    const out = makeVariantSource(
      SRC,
      a,
      new Map<number, UnrollFactor>([
        [3, 8],
        [4, 'full'],
        [5, 1],
      ]),
      '/abs/k.cu',
    ).split('\n');
    assert.equal(out[2].trim(), '#pragma unroll 8');
    assert.equal(out[4].trim(), '_Pragma("unroll") for (int j = 0; j < n; ++j) a[j] += 1;');
    assert.equal(out[5].trim(), '_Pragma("unroll 1") for (int m = 0; m < 8; ++m) a[m] *= 2;');
    const def = makeVariantSource(
      SRC,
      a,
      new Map<number, UnrollFactor>([
        [3, 'default'],
        [5, 'default'],
      ]),
      '/abs/k.cu',
    ).split('\n');
    assert.equal(def[2].trim(), '');
    assert.equal(def[5].trim(), 'for (int m = 0; m < 8; ++m) a[m] *= 2;');
  });

  test('the rewritten file re-analyses to the requested pragmas', async () => {
    const a = await analyze(SRC);
    const out = makeVariantSource(
      SRC,
      a,
      new Map<number, UnrollFactor>([
        [3, 16],
        [4, 2],
        [5, 'full'],
      ]),
      '/abs/k.cu',
    );
    const b = await analyze(out.slice(out.indexOf('\n') + 1));
    assert.deepEqual(
      b.kernels[0].loops.map(l => [l.line, writtenFactor(l)]),
      [
        [3, 16],
        [4, 2],
        [5, 'full'],
      ],
    );
  });

  test('unknown loop line is an error; factor lists parse and dedupe', async () => {
    const a = await analyze(SRC);
    assert.throws(() => makeVariantSource(SRC, a, new Map([[2, 4]]), '/abs/k.cu'), VariantError);
    assert.deepEqual(UnrollFactors.parse('default,1,2,4,8,16,full,4').toJSON(), ['default', 1, 2, 4, 8, 16, 'full']);
    assert.throws(() => UnrollFactors.parse('0'));
    assert.throws(() => UnrollFactors.parse('x'));
    assert.equal(
      variantKey(
        new Map<number, UnrollFactor>([
          [40, 4],
          [12, 'full'],
        ]),
      ),
      'L12=full,L40=4',
    );
    assert.equal(variantKey(new Map()), 'as-written');
  });
});

// A file with bytes that are not UTF-8 (a Latin-1 comment, a stray byte in a string literal): the
// analysis reads it decoded, but the shadow copy nvcc compiles must be the file's own bytes.
const NON_UTF8 = Buffer.concat([
  Buffer.from('// caf'),
  Buffer.from([0xe9]),
  Buffer.from(' - a Latin-1 comment '),
  Buffer.from([0xff, 0x0a]),
  Buffer.from('__global__ void k(float* a, int n) {\n  const char* s = "na'),
  Buffer.from([0xef]),
  Buffer.from('ve ', 'utf8'),
  Buffer.from([0xc3]),
  Buffer.from('";\n#pragma unroll 4\n  for (int i = 0; i < n; ++i) a[i] = s[i % 3];\n  /* '),
  Buffer.from([0xfe]),
  Buffer.from(' */ _Pragma("unroll 2") for (int j = 0; j < n; ++j) a[j] += 1;\n}\n'),
]);

describe('variant sources of a file that is not all UTF-8', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bytes-'));
  const file = path.join(dir, 'latin1.cu');
  fs.writeFileSync(file, NON_UTF8);
  const text = NON_UTF8.toString('utf8');
  const lines = (b: Buffer) => {
    const out: Buffer[] = [];
    let from = 0;
    for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) {
      out.push(b.subarray(from, i));
      from = i + 1;
    }
    out.push(b.subarray(from));
    return out;
  };

  test('the shadow copy equals the file byte for byte outside the edited pragmas', async () => {
    const a = await analyze(text, file);
    const [first, second] = a.kernels[0].loops;
    assert.equal(first.pragma?.factor, 4);
    assert.equal(second.pragma?.factor, 2);
    // as written: the #line directive, then exactly the file
    const asWritten = variantSource(text, a, new Map(), file);
    assert.ok(Buffer.isBuffer(asWritten));
    assert.deepEqual(asWritten, Buffer.concat([Buffer.from(`#line 1 "${file}"\n`), NON_UTF8]));
    // both pragmas changed: only their lines differ, and only in the pragma
    const v = variantSource(
      text,
      a,
      new Map<number, UnrollFactor>([
        [first.line, 8],
        [second.line, 'default'],
      ]),
      file,
    ) as Buffer;
    const got = lines(v).slice(1);
    const want = lines(NON_UTF8);
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i++) {
      if (i + 1 === first.pragma!.line) assert.equal(got[i].toString(), '#pragma unroll 8');
      else if (i + 1 === second.line)
        assert.deepEqual(got[i], Buffer.from(want[i].toString('latin1').replace('_Pragma("unroll 2")', ''), 'latin1'));
      else assert.deepEqual(got[i], want[i], `line ${i + 1}`);
    }
  });

  test('a UTF-8 file, or an edited buffer that is no longer the file, gets the text as before', async () => {
    const utf8 = path.join(dir, 'utf8.cu');
    fs.writeFileSync(utf8, '// café 😀\n' + SRC);
    const t = fs.readFileSync(utf8, 'utf8');
    const a = await analyze(t, utf8);
    const f = new Map<number, UnrollFactor>([[a.kernels[0].loops[0].line, 2]]);
    assert.equal(variantSource(t, a, f, utf8), makeVariantSource(t, a, f, utf8));
    const edited = text.replace('a[i] = s[i % 3]', 'a[i] = 0');
    const b = await analyze(edited, file);
    assert.equal(variantSource(edited, b, new Map(), file), makeVariantSource(edited, b, new Map(), file));
    // byte offsets are found even after an invalid byte on the pragma's own line
    const raw = Buffer.concat([
      Buffer.from('__global__ void k(float* a) {\n  /* '),
      Buffer.from([0xe0, 0x80]),
      Buffer.from(' */ _Pragma("unroll 4") for (int j = 0; j < 9; ++j) a[j] = 1;\n}\n'),
    ]);
    const rawFile = path.join(dir, 'same-line.cu');
    fs.writeFileSync(rawFile, raw);
    const rt = raw.toString('utf8');
    const ra = await analyze(rt, rawFile);
    const out = makeVariantBytes(raw, rt, ra, new Map([[ra.kernels[0].loops[0].line, 16]]), rawFile);
    assert.deepEqual(
      lines(out)[2],
      Buffer.concat([
        Buffer.from('  /* '),
        Buffer.from([0xe0, 0x80]),
        Buffer.from(' */ _Pragma("unroll 16") for (int j = 0; j < 9; ++j) a[j] = 1;'),
      ]),
    );
  });
});
