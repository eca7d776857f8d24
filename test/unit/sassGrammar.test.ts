// The SASS listing grammar (syntaxes/unroll-lens-sass.tmLanguage.json), tokenized by the same
// TextMate engine VS Code uses: vscode-textmate and vscode-oniguruma from the code-server build
// the integration tests run (scripts/setup-test-tools.sh). Without it the tests are skipped
// outside CI, with the reason; in CI that is an error.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const GRAMMAR = path.join(REPO_ROOT, 'syntaxes', 'unroll-lens-sass.tmLanguage.json');

let noCodeServer = 'no code-server in .tools (npm run setup:test-tools)';
function vscodeModules(): string | null {
  try {
    const tools = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, '.tools', 'test-tools.json'), 'utf8'));
    // (without root the setup script may have had to leave code-server out: it says why)
    if (!tools.codeServerEntry && tools.codeServerMissing) noCodeServer = `no code-server in .tools: ${tools.codeServerMissing}`;
    const dir = path.join(path.dirname(tools.codeServerEntry), '..', '..', 'lib', 'vscode', 'node_modules');
    return fs.existsSync(path.join(dir, 'vscode-textmate')) && fs.existsSync(path.join(dir, 'vscode-oniguruma')) ? dir : null;
  } catch {
    return null;
  }
}

type Token = { text: string; scopes: string[] };
let tokenize: ((lines: string[]) => Token[][]) | null = null;
const modules = vscodeModules();
if (!modules && process.env.CI) throw new Error('vscode-textmate missing: scripts/setup-test-tools.sh should have installed code-server');

/** The scopes of the first token whose text contains `text` on a tokenized line. */
function scopesOf(line: Token[], text: string): string {
  const t = line.find(x => x.text.includes(text));
  assert.ok(t, `no token "${text}" in ${JSON.stringify(line.map(x => x.text))}`);
  return t.scopes.join(' ');
}

describe('SASS grammar', { skip: modules ? false : noCodeServer }, () => {
  before(async () => {
    /* eslint-disable @typescript-eslint/no-require-imports -- code-server's copies, loaded by path */
    const tm = require(path.join(modules!, 'vscode-textmate'));
    const onig = require(path.join(modules!, 'vscode-oniguruma'));
    /* eslint-enable @typescript-eslint/no-require-imports */
    await onig.loadWASM(fs.readFileSync(path.join(modules!, 'vscode-oniguruma', 'release', 'onig.wasm')).buffer);
    const registry = new tm.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (p: string[]) => new onig.OnigScanner(p),
        createOnigString: (s: string) => new onig.OnigString(s),
      }),
      loadGrammar: async () => tm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR),
    });
    const grammar = await registry.loadGrammar('source.unroll-lens-sass');
    assert.ok(grammar, 'the grammar did not load');
    tokenize = lines => {
      let state = tm.INITIAL;
      return lines.map(l => {
        const r = grammar.tokenizeLine(l, state);
        state = r.ruleStack;
        return r.tokens.map((t: { startIndex: number; endIndex: number; scopes: string[] }) => ({
          text: l.slice(t.startIndex, t.endIndex),
          scopes: t.scopes,
        }));
      });
    };
  });

  test('package.json contributes it for the unroll-lens-sass language', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    const g = pkg.contributes.grammars.find((x: { language: string }) => x.language === 'unroll-lens-sass');
    assert.equal(path.join(REPO_ROOT, g.path), GRAMMAR);
    assert.equal(g.scopeName, 'source.unroll-lens-sass');
    const lang = pkg.contributes.languages.find((x: { id: string }) => x.id === 'unroll-lens-sass');
    assert.deepEqual(lang.extensions, ['.cusass']);
  });

  test('headers, source lines, machine-loop markers and labels', () => {
    const [head, table, src, open, close, label] = tokenize!([
      '// Unroll Lens · SASS of matmul_basic(const float *, const float *, float *, int) · matmul_unroll.cu line 51 · factor default · sm_90',
      '//   A  loop  ×16  main       0x0240–0x06c0  (73 instructions)',
      '// ── matmul_unroll.cu:46  const int row = blockIdx.y * blockDim.y + threadIdx.y;   [S2R 2 · IMAD 1]',
      '// ┌ A: loop ×16 (main)',
      '// └ A',
      '.L_x_43:',
    ]);
    assert.match(scopesOf(head, 'SASS of'), /comment\.line/);
    assert.match(scopesOf(table, '×16'), /constant\.numeric\.trip/);
    assert.match(scopesOf(src, 'matmul_unroll.cu:46'), /markup\.underline\.link\.source-location/);
    assert.match(scopesOf(src, 'blockIdx'), /string\.unquoted\.source-text/);
    assert.match(scopesOf(src, 'S2R'), /entity\.name\.function\.opcode/);
    assert.match(scopesOf(open, '┌'), /keyword\.control\.machine-loop/);
    assert.match(scopesOf(open, '×16'), /constant\.numeric\.trip/);
    assert.match(scopesOf(close, 'A'), /keyword\.control\.machine-loop/);
    assert.match(scopesOf(label, '.L_x_43'), /entity\.name\.label/);
  });

  test('instructions: address, predicate, opcode and modifiers, registers, banks, immediates, labels, stall note', () => {
    const [ldc, bra, ldg, isetp, ffma, s2r, norm] = tokenize!([
      '        /*0000*/  LDC R1, c[0x0][0x28] ;',
      '        /*0010*/  @!P0 BRA `(.L_x_39) ;      // ⏱ 2.1% · long_scoreboard 61%',
      '        /*0240*/  LDG.E.CONSTANT R12, desc[UR6][R2.64] ;',
      '        /*0250*/  ISETP.GE.AND P0, PT, R0, -0x1, PT ;',
      '        /*0260*/  @UP1 FFMA R5, R12.reuse, 1.5, RZ ;',
      '        /*0270*/  S2R R0, SR_TID.X ;',
      '  IMAD.WIDE R4, R3, 0x4, R6 ;',
    ]);
    assert.match(scopesOf(ldc, '/*0000*/'), /comment\.block\.address/);
    assert.match(scopesOf(ldc, 'LDC'), /entity\.name\.function\.opcode/);
    assert.match(scopesOf(ldc, 'R1'), /variable\.other\.register/);
    assert.match(scopesOf(ldc, 'c['), /variable\.other\.constant-bank/);
    assert.match(scopesOf(ldc, '0x28'), /constant-bank/);
    assert.match(scopesOf(ldc, ';'), /punctuation\.terminator/);
    assert.match(scopesOf(bra, '@!P0'), /keyword\.other\.predicate/);
    assert.match(scopesOf(bra, '.L_x_39'), /entity\.name\.label/);
    assert.match(scopesOf(bra, '⏱'), /keyword\.other\.stall/);
    assert.match(scopesOf(bra, '2.1%'), /constant\.numeric\.percentage/);
    assert.match(scopesOf(bra, 'long_scoreboard'), /comment\.line\.stall/);
    assert.match(scopesOf(ldg, '.E.CONSTANT'), /storage\.modifier\.opcode-modifier/);
    assert.match(scopesOf(ldg, 'desc'), /support\.function\.descriptor/);
    assert.match(scopesOf(ldg, 'UR6'), /variable\.other\.register/);
    assert.match(scopesOf(ldg, 'R2.64'), /variable\.other\.register/);
    assert.match(scopesOf(isetp, 'ISETP'), /opcode/);
    assert.match(scopesOf(isetp, '.GE.AND'), /opcode-modifier/);
    assert.match(scopesOf(isetp, 'P0'), /variable\.other\.predicate/);
    assert.match(scopesOf(isetp, 'PT'), /variable\.other\.predicate/);
    assert.match(scopesOf(isetp, '-0x1'), /constant\.numeric\.hex/);
    assert.match(scopesOf(ffma, '@UP1'), /keyword\.other\.predicate/);
    assert.match(scopesOf(ffma, 'R12.reuse'), /variable\.other\.register/);
    assert.match(scopesOf(ffma, '1.5'), /constant\.numeric\.decimal/);
    assert.match(scopesOf(ffma, 'RZ'), /variable\.other\.register/);
    assert.match(scopesOf(s2r, 'SR_TID.X'), /variable\.other\.register/);
    assert.match(scopesOf(norm, 'IMAD'), /entity\.name\.function\.opcode/, 'a normalised line has no address column');
    assert.match(scopesOf(norm, '0x4'), /constant\.numeric\.hex/);
  });

  test('normalised listings: lower-case renumbered registers, predicates and labels', () => {
    const [ldg, bra, label, ffma] = tokenize!([
      '        LDG.E.CONSTANT r11, desc[ur1][r7.64] ;',
      '        @!p0 BRA `(.L2) ;',
      '.L2:',
      '        @up0 FFMA r3, r4, r5, r3 ;',
    ]);
    assert.match(scopesOf(ldg, 'r11'), /variable\.other\.register/);
    assert.match(scopesOf(ldg, 'ur1'), /variable\.other\.register/);
    assert.match(scopesOf(ldg, 'r7.64'), /variable\.other\.register/);
    assert.match(scopesOf(bra, '@!p0'), /keyword\.other\.predicate/);
    assert.match(scopesOf(bra, 'BRA'), /entity\.name\.function\.opcode/);
    assert.match(scopesOf(bra, '.L2'), /entity\.name\.label/);
    assert.match(scopesOf(label, '.L2'), /entity\.name\.label/);
    assert.match(scopesOf(ffma, '@up0'), /keyword\.other\.predicate/);
    assert.match(scopesOf(ffma, 'FFMA'), /entity\.name\.function\.opcode/);
  });

  // `unroll-lens sass cuda-samples/matmul_unroll.cu --loop 51 --listing --factor 4 [--normalise]`
  // and the H100 listings with warp-stall notes (bench --source-stalls, then sass --listing --stalls)
  for (const name of [
    'sass/listing-matmul-unroll4.txt',
    'sass/listing-matmul-unroll4-normalised.txt',
    'gpu/h100/sass-listing/listing.4.txt',
    'gpu/h100/sass-listing/listing.as-written.txt',
  ])
    test(`every line of a real listing (${name}) is coloured, but for spacing and punctuation`, () => {
      const lines = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', name), 'utf8').split('\n');
      const plain = tokenize!(lines)
        .flat()
        .filter(t => t.scopes.length === 1 || (t.scopes.length === 2 && t.scopes[1] === 'meta.instruction.unroll-lens-sass'))
        .map(t => t.text.trim())
        .filter(t => t !== '' && !/^[,[\]+]+$/.test(t) && !/^[`()]+$/.test(t));
      assert.deepEqual([...new Set(plain)], []);
    });
});
