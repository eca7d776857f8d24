import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { classifyFailure, CompilerMessage, parseNvccOutput, sourceColumn } from '../../src/engine/toolchain/nvccErrors';

// Real nvcc 13.0 output, captured by test/fixtures/nvcc/regenerate.sh.
const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'nvcc');

function load(name: string): { text: string; msgs: CompilerMessage[] } {
  const text = fs.readFileSync(path.join(FIXTURES, `${name}.stderr.txt`), 'utf8');
  return { text, msgs: parseNvccOutput(text) };
}

/** The fields most tests compare. */
function brief(m: CompilerMessage) {
  return { file: m.file, line: m.line, column: m.column, severity: m.severity, code: m.code, kind: m.kind };
}

describe('nvcc front-end diagnostics (EDG)', () => {
  test('error with quoted source and caret: line and caret column', () => {
    const { msgs, text } = load('undefined_identifier');
    assert.deepEqual(msgs.map(brief), [
      { file: 'undefined_identifier.cu', line: 4, column: 12, severity: 'error', code: null, kind: 'source' },
    ]);
    assert.equal(msgs[0].message, 'identifier "x" is undefined');
    assert.equal(msgs[0].excerpt, '    a[i] = x * 2.0f;');
    assert.equal(classifyFailure(msgs, text), 'source');
  });

  test('the caret column points at the character in the real source line', () => {
    const src = fs.readFileSync(path.join(FIXTURES, 'undefined_identifier.cu'), 'utf8').split('\n');
    const { msgs } = load('undefined_identifier');
    const m = msgs[0];
    assert.equal(src[m.line! - 1][m.column! - 1], 'x');
  });

  test('several errors, a numbered warning, the Remark line; summary line is not a message', () => {
    const { msgs, text } = load('error_codes');
    assert.deepEqual(msgs.map(brief), [
      { file: 'error_codes.cu', line: 3, column: 13, severity: 'error', code: null, kind: 'source' },
      { file: 'error_codes.cu', line: 5, column: 3, severity: 'error', code: null, kind: 'source' },
      { file: 'error_codes.cu', line: 2, column: 7, severity: 'warning', code: '177', kind: 'source' },
      { file: null, line: null, column: null, severity: 'remark', code: null, kind: 'source' },
    ]);
    assert.equal(msgs[2].message, 'variable "unused_var" was declared but never referenced');
    assert.match(msgs[3].message, /^The warnings can be suppressed with "-diag-suppress <warning-number>"$/);
    assert.ok(!msgs.some(m => /errors detected/.test(m.message)));
    assert.equal(classifyFailure(msgs, text), 'source');
  });

  test('warnings only: no failure', () => {
    const { msgs, text } = load('warning_only');
    assert.deepEqual(
      msgs.map(m => [m.severity, m.code, m.line, m.column]),
      [
        ['warning', '177', 2, 7],
        ['remark', null, null, null],
      ],
    );
    assert.equal(classifyFailure(msgs, text), null);
  });

  test('a warning promoted by -Werror: "error #177-D"', () => {
    const { msgs, text } = load('werror_promoted');
    assert.deepEqual(brief(msgs[0]), { file: 'warning_only.cu', line: 2, column: 7, severity: 'error', code: '177', kind: 'source' });
    assert.equal(classifyFailure(msgs, text), 'source');
  });

  test('synthetic "error #20-D" header (numbered error) keeps the number only', () => {
    const msgs = parseNvccOutput(
      'k.cu(12): error #20-D: identifier "x" is undefined\n    y = x;\n        ^\n\n1 error detected in the compilation of "k.cu".\n',
    );
    assert.deepEqual(msgs.map(brief), [{ file: 'k.cu', line: 12, column: 7, severity: 'error', code: '20', kind: 'source' }]);
  });

  test('--brief-diagnostics: no quoted source, no columns', () => {
    const { msgs } = load('brief_diagnostics');
    assert.deepEqual(
      msgs.map(m => [m.line, m.column, m.severity]),
      [
        [3, null, 'error'],
        [5, null, 'error'],
        [2, null, 'warning'],
        [null, null, 'remark'],
      ],
    );
    assert.equal(msgs[1].message, 'identifier "undeclared_fn" is undefined');
  });

  test('unroll pragma warning #20170-D', () => {
    const { msgs } = load('pragma_unroll_warn');
    assert.deepEqual(brief(msgs[0]), {
      file: 'pragma_unroll_warn.cu',
      line: 2,
      column: 9,
      severity: 'warning',
      code: '20170',
      kind: 'source',
    });
    assert.match(msgs[0].message, /^extra characters in the unroll pragma/);
  });

  test('errors without a quoted line (reported after the front end) have no column', () => {
    const { msgs } = load('host_function_in_device');
    assert.deepEqual(msgs.map(brief), [
      { file: 'host_function_in_device.cu', line: 3, column: null, severity: 'error', code: null, kind: 'source' },
      { file: 'host_function_in_device.cu', line: 3, column: null, severity: 'error', code: null, kind: 'source' },
    ]);
    assert.equal(msgs[0].message, 'calling a __host__ function("host_only(int)") from a __global__ function("k") is not allowed');
    assert.equal(msgs[1].message, 'identifier "host_only" is undefined in device code');
  });

  test('continuation lines join the message; notes become related locations', () => {
    const { msgs } = load('overload_notes');
    assert.equal(msgs.length, 1);
    assert.deepEqual(brief(msgs[0]), { file: 'overload_notes.cu', line: 5, column: 3, severity: 'error', code: null, kind: 'source' });
    assert.equal(msgs[0].message, 'no instance of overloaded function "f" matches the argument list\nargument types are: (float *)');
    assert.equal(msgs[0].excerpt, '  f(a);');
    assert.deepEqual(
      msgs[0].related?.map(r => [r.file, r.line]),
      [
        ['overload_notes.cu', 2],
        ['overload_notes.cu', 1],
      ],
    );
    assert.match(msgs[0].related![0].message!, /does not match because argument #1/);
  });

  test('syntax errors in host code come from the CUDA front end, not gcc', () => {
    const { msgs, text } = load('host_code_error');
    assert.deepEqual(msgs.map(brief), [{ file: 'host_code_error.cu', line: 8, column: 3, severity: 'error', code: null, kind: 'source' }]);
    assert.equal(msgs[0].message, 'expected a ";"');
    assert.equal(classifyFailure(msgs, text), 'source');
  });

  test('errors that name a missing nvcc flag are kind "flags" with the flag', () => {
    const rc = load('relaxed_constexpr');
    assert.equal(rc.msgs[0].kind, 'flags');
    assert.equal(rc.msgs[0].suggestedFlag, '--expt-relaxed-constexpr');
    assert.equal(classifyFailure(rc.msgs, rc.text), 'flags');
    const el = load('extended_lambda');
    assert.deepEqual(
      el.msgs.map(m => [m.line, m.suggestedFlag]),
      [
        [5, '--extended-lambda'],
        [5, '--extended-lambda'],
        [2, '--expt-relaxed-constexpr'],
        [2, '--expt-relaxed-constexpr'],
      ],
    );
    assert.equal(classifyFailure(el.msgs, el.text), 'flags');
    assert.deepEqual(el.msgs[1].related, [
      { file: 'extended_lambda.cu', line: 5, message: 'instantiation of "apply" based on template argument <lambda [](float)->float>' },
    ]);
  });
});

describe('#line directives and template instantiations', () => {
  test('#line 1 "/abs/original.cu": messages name the original path and line', () => {
    const { msgs } = load('line_directive');
    assert.deepEqual(msgs.map(brief), [{ file: '/abs/original.cu', line: 2, column: 10, severity: 'error', code: null, kind: 'source' }]);
    assert.equal(msgs[0].message, 'identifier "y" is undefined');
  });

  test('"detected during:" chain with several instantiations', () => {
    const { msgs } = load('template_instantiation');
    assert.equal(msgs.length, 1);
    assert.deepEqual(brief(msgs[0]), {
      file: 'template_instantiation.cu',
      line: 3,
      column: 10,
      severity: 'error',
      code: null,
      kind: 'source',
    });
    assert.equal(msgs[0].message, 'expression must have class type but it has type "float"');
    assert.deepEqual(msgs[0].related, [
      { file: 'template_instantiation.cu', line: 8, message: 'instantiation of "T twice(T) [with T=float]"' },
      { file: 'template_instantiation.cu', line: 11, message: 'instantiation of "void k<B>(float *) [with B=4]"' },
    ]);
  });

  test('single-line "detected during instantiation of … at line N"', () => {
    const { msgs } = load('single_instantiation');
    assert.deepEqual(
      msgs[0].related?.map(r => [r.file, r.line]),
      [['single_instantiation.cu', 7]],
    );
  });

  test('error in a header, instantiated "at line 4 of" the .cu', () => {
    const { msgs } = load('header_instantiation');
    assert.deepEqual(brief(msgs[0]), { file: 'inc/tmpl.cuh', line: 3, column: 10, severity: 'error', code: null, kind: 'source' });
    assert.deepEqual(
      msgs[0].related?.map(r => [r.file, r.line]),
      [['header_instantiation.cu', 4]],
    );
  });

  test('host template errors also come from the front end, with their instantiation', () => {
    const { msgs } = load('host_template_error');
    assert.deepEqual(brief(msgs[0]), {
      file: 'host_template_error.cu',
      line: 7,
      column: 24,
      severity: 'error',
      code: null,
      kind: 'source',
    });
    assert.deepEqual(
      msgs[0].related?.map(r => [r.file, r.line]),
      [['host_template_error.cu', 12]],
    );
  });
});

describe('gcc preprocessor and host compiler', () => {
  test('missing include in gcc format: file:line:col, kind include', () => {
    const { msgs, text } = load('missing_include');
    assert.deepEqual(msgs.map(brief), [
      { file: 'missing_include.cu', line: 3, column: 10, severity: 'error', code: null, kind: 'include' },
    ]);
    assert.equal(msgs[0].message, 'nothere.h: No such file or directory');
    assert.equal(classifyFailure(msgs, text), 'include');
  });

  test('missing system include', () => {
    const { msgs } = load('missing_system_include');
    assert.deepEqual(msgs.map(brief), [
      { file: 'missing_system_include.cu', line: 1, column: 10, severity: 'error', code: null, kind: 'include' },
    ]);
  });

  test('missing -include header: <command-line> has no location', () => {
    const { msgs, text } = load('forced_include_missing');
    assert.deepEqual(msgs.map(brief), [{ file: null, line: null, column: null, severity: 'error', code: null, kind: 'include' }]);
    assert.equal(classifyFailure(msgs, text), 'include');
  });

  test('EDG "cannot open source file" variant (synthetic) is an include failure', () => {
    const msgs = parseNvccOutput(
      'k.cu(3): catastrophic error: cannot open source file "nothere.h"\n  #include "nothere.h"\n                      ^\n\n1 catastrophic error detected in the compilation of "k.cu".\nCompilation terminated.\n',
    );
    assert.deepEqual(msgs.map(brief), [{ file: 'k.cu', line: 3, column: 21, severity: 'error', code: null, kind: 'include' }]);
  });

  test('#error in the device pass (gcc preprocessor) is a source error', () => {
    const { msgs } = load('device_error_directive');
    assert.deepEqual(msgs.map(brief), [
      { file: 'device_error_directive.cu', line: 3, column: 2, severity: 'error', code: null, kind: 'source' },
    ]);
    assert.equal(msgs[0].message, '#error "device pass only"');
  });

  test('#error in the host pass (-c)', () => {
    const { msgs } = load('host_preprocessor_error');
    assert.deepEqual(msgs.map(brief), [
      { file: 'host_preprocessor_error.cu', line: 4, column: 2, severity: 'error', code: null, kind: 'source' },
    ]);
  });

  test('gcc error in host code (-c): "In function" context is skipped', () => {
    const { msgs, text } = load('host_attr_error');
    assert.deepEqual(msgs.map(brief), [
      { file: 'host_attr_error.cu', line: 6, column: 10, severity: 'error', code: null, kind: 'host-compiler' },
    ]);
    assert.match(msgs[0].message, /declared with attribute error: do not call me$/);
    assert.equal(classifyFailure(msgs, text), 'host-compiler');
  });

  test('assembler error in host code', () => {
    const { msgs, text } = load('host_asm_error');
    assert.deepEqual(msgs.map(brief), [
      { file: 'host_asm_error.cu', line: 4, column: null, severity: 'error', code: null, kind: 'host-compiler' },
    ]);
    assert.equal(classifyFailure(msgs, text), 'host-compiler');
  });

  test('gcc driver rejects an -Xcompiler option: flags', () => {
    const { msgs, text } = load('xcompiler_bad_flag');
    assert.deepEqual(msgs.map(brief), [{ file: null, line: null, column: null, severity: 'error', code: null, kind: 'flags' }]);
    assert.match(msgs[0].message, /unrecognized command-line option .-fbogus-flag./);
    assert.equal(classifyFailure(msgs, text), 'flags');
  });

  test('missing input file (cc1plus)', () => {
    const { msgs } = load('missing_input');
    assert.deepEqual(
      msgs.map(m => [m.tool, m.message, m.kind]),
      [['cc1plus', 'nofile.cu: No such file or directory', 'flags']],
    );
  });

  test('a -ccbin that does not exist: host-compiler', () => {
    const { msgs, text } = load('bad_ccbin');
    assert.deepEqual(
      msgs.map(m => [m.message, m.kind]),
      [
        ['/nonexistent/g++: No such file or directory', 'host-compiler'],
        ['Failed to preprocess host compiler properties.', 'host-compiler'],
      ],
    );
    assert.equal(classifyFailure(msgs, text), 'host-compiler');
  });

  test('unsupported host compiler version (synthetic host_config.h #error)', () => {
    const msgs = parseNvccOutput(
      '/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 14 are not supported!\n  143 | #error -- unsupported GNU version!\n      |  ^~~~~\n',
    );
    assert.deepEqual(
      msgs.map(m => [m.line, m.column, m.kind]),
      [[143, 2, 'host-compiler']],
    );
  });

  test('gcc notes and "required from" context attach to the error (synthetic)', () => {
    const msgs = parseNvccOutput(
      [
        "a.cu: In instantiation of 'int f(T) [with T = int]':",
        'a.cu:10:12:   required from here',
        "a.cu:5:10: error: request for member 'x' in 'v', which is of non-class type 'int'",
        'a.cu:2:6: note: declared here',
        "a.cu:7:3: warning: unused variable 'q' [-Wunused-variable]",
      ].join('\n'),
    );
    assert.deepEqual(msgs.map(brief), [
      { file: 'a.cu', line: 5, column: 10, severity: 'error', code: null, kind: 'host-compiler' },
      { file: 'a.cu', line: 7, column: 3, severity: 'warning', code: '-Wunused-variable', kind: 'host-compiler' },
    ]);
    assert.deepEqual(
      msgs[0].related?.map(r => [r.file, r.line, r.message]),
      [
        ['a.cu', 10, 'required from here'],
        ['a.cu', 2, 'declared here'],
      ],
    );
  });

  test('MSVC host compiler format (synthetic)', () => {
    const msgs = parseNvccOutput(
      "C:\\src\\k.cu(12): error C2065: 'x': undeclared identifier\nC:\\src\\k.cu(3): fatal error C1083: Cannot open include file: 'nothere.h': No such file or directory\n",
    );
    assert.deepEqual(msgs.map(brief), [
      { file: 'C:\\src\\k.cu', line: 12, column: null, severity: 'error', code: 'C2065', kind: 'host-compiler' },
      { file: 'C:\\src\\k.cu', line: 3, column: null, severity: 'error', code: 'C1083', kind: 'include' },
    ]);
  });

  test('Windows path in EDG format (synthetic)', () => {
    const msgs = parseNvccOutput('C:\\work\\k.cu(7): error: identifier "x" is undefined\n\n');
    assert.deepEqual(
      msgs.map(m => [m.file, m.line]),
      [['C:\\work\\k.cu', 7]],
    );
  });
});

describe('ptxas, nvcc driver, linkers', () => {
  test('ptxas error: too much shared data', () => {
    const { msgs, text } = load('shared_too_big');
    assert.deepEqual(msgs.map(brief), [{ file: null, line: null, column: null, severity: 'error', code: null, kind: 'ptxas' }]);
    assert.equal(msgs[0].message, "Entry function '_Z3bigPf' uses too much shared data (0x40000 bytes, 0xc000 max)");
    assert.equal(msgs[0].tool, 'ptxas');
    assert.equal(classifyFailure(msgs, text), 'ptxas');
  });

  test('ptxas fatal: unresolved extern function', () => {
    const { msgs, text } = load('unresolved_extern');
    assert.deepEqual(
      msgs.map(m => [m.severity, m.kind, m.message]),
      [['error', 'ptxas', "Unresolved extern function '_Z6helperf'"]],
    );
    assert.equal(classifyFailure(msgs, text), 'ptxas');
  });

  test('ptxas errors located in the temporary .ptx (inline asm)', () => {
    const { msgs } = load('inline_ptx_error');
    assert.equal(msgs.length, 3);
    assert.match(msgs[0].file!, /inline_ptx_error\.ptx$/);
    assert.equal(msgs[0].line, 27);
    assert.equal(msgs[0].message, "Unknown modifier '.instr'");
    assert.deepEqual(
      msgs.map(m => m.kind),
      ['ptxas', 'ptxas', 'ptxas'],
    );
    assert.equal(msgs[2].message, 'Ptx assembly aborted due to errors');
  });

  test('ptxas rejects an -Xptxas option: flags', () => {
    const { msgs, text } = load('ptxas_unknown_option');
    assert.equal(classifyFailure(msgs, text), 'flags');
  });

  test('ptxas warnings (spills); "ptxas info" lines are not diagnostics', () => {
    const { msgs, text } = load('spills');
    assert.deepEqual(
      msgs.map(m => [m.severity, m.kind]),
      [
        ['warning', 'ptxas'],
        ['warning', 'ptxas'],
      ],
    );
    assert.match(msgs[1].message, /^Registers are spilled to local memory in function '_Z1kPfPKf'/);
    assert.equal(classifyFailure(msgs, text), null);
    assert.deepEqual(
      parseNvccOutput("ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\nptxas info    : Used 8 registers\n"),
      [],
    );
  });

  test('unsupported gpu architecture: arch', () => {
    for (const name of ['unsupported_arch', 'unsupported_sm']) {
      const { msgs, text } = load(name);
      assert.deepEqual(
        msgs.map(m => [m.tool, m.severity, m.kind]),
        [['nvcc', 'error', 'arch']],
      );
      assert.equal(classifyFailure(msgs, text), 'arch');
    }
    assert.equal(load('unsupported_arch').msgs[0].message, "Unsupported gpu architecture 'compute_99'");
  });

  test('unknown nvcc option and bad option value: flags', () => {
    const u = load('unknown_option');
    assert.deepEqual(
      u.msgs.map(m => [m.message, m.kind]),
      [["Unknown option '--bogus'", 'flags']],
    );
    const s = load('bad_std');
    assert.deepEqual(
      s.msgs.map(m => [m.message, m.kind]),
      [["Value 'c++99' is not defined for option 'std'", 'flags']],
    );
    assert.equal(classifyFailure(parseNvccOutput("ptxas fatal   : Value 'sm_99' is not defined for option 'gpu-name'"), ''), 'arch');
  });

  test('nvcc warning (arch given twice) is not a failure', () => {
    const { msgs, text } = load('arch_twice');
    assert.deepEqual(
      msgs.map(m => [m.tool, m.severity]),
      [['nvcc', 'warning']],
    );
    assert.equal(classifyFailure(msgs, text), null);
  });

  test('nvlink undefined reference: link', () => {
    const { msgs, text } = load('nvlink_undefined');
    assert.deepEqual(
      msgs.map(m => [m.tool, m.kind]),
      [['nvlink', 'link']],
    );
    assert.match(msgs[0].message, /^Undefined reference to '_Z6helperf'/);
    assert.equal(classifyFailure(msgs, text), 'link');
  });

  test('host linker undefined reference: link; "in function" context skipped', () => {
    const { msgs, text } = load('ld_undefined');
    assert.deepEqual(
      msgs.map(m => [m.tool, m.kind, m.message]),
      [
        ['ld', 'link', "undefined reference to `missing_host_fn()'"],
        ['collect2', 'link', 'ld returned 1 exit status'],
      ],
    );
    assert.equal(classifyFailure(msgs, text), 'link');
  });

  test('crashes are internal (synthetic)', () => {
    const a = parseNvccOutput("nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)\n");
    assert.deepEqual(
      a.map(m => [m.severity, m.kind]),
      [['error', 'internal']],
    );
    const b = parseNvccOutput('k.cu(3): internal error: assertion failed at: "expr.c", line 12\n\n');
    assert.equal(b[0].kind, 'internal');
    assert.equal(classifyFailure([], 'Segmentation fault (core dumped)\n'), 'internal');
  });
});

describe('classification and robustness', () => {
  test('the kind of the first error wins', () => {
    const msgs = parseNvccOutput(
      'k.cu(2): warning #177-D: variable "y" was declared but never referenced\n\nnvcc fatal   : Unsupported gpu architecture \'compute_99\'\nptxas error   : too much\n',
    );
    assert.equal(classifyFailure(msgs, ''), 'arch');
  });

  test('no messages: null, unless stderr still shows a failure', () => {
    assert.equal(classifyFailure([], ''), null);
    assert.equal(classifyFailure([], '3 errors detected in the compilation of "k.cu".'), 'source');
  });

  test('CRLF line endings and ANSI colours', () => {
    const msgs = parseNvccOutput(
      'k.cu(4): error: identifier "x" is undefined\r\n    a = x;\r\n        ^\r\n\r\n\x1b[01m\x1b[Kk.cu:3:10:\x1b[m\x1b[K \x1b[01;31m\x1b[Kfatal error: \x1b[m\x1b[Kn.h: No such file or directory\r\n',
    );
    assert.deepEqual(msgs.map(brief), [
      { file: 'k.cu', line: 4, column: 7, severity: 'error', code: null, kind: 'source' },
      { file: 'k.cu', line: 3, column: 10, severity: 'error', code: null, kind: 'include' },
    ]);
  });

  test('every fixture parses; every failing fixture classifies', () => {
    for (const f of fs.readdirSync(FIXTURES).filter(f => f.endsWith('.stderr.txt'))) {
      const name = f.replace(/\.stderr\.txt$/, '');
      const { msgs, text } = load(name);
      const nonEmpty = text.trim().length > 0;
      assert.ok(!nonEmpty || msgs.length > 0, `${name}: no messages`);
      if (msgs.some(m => m.severity === 'error')) assert.notEqual(classifyFailure(msgs, text), null, name);
    }
  });

  test('garbage never throws', () => {
    const inputs: unknown[] = [
      '',
      '\n\n\n',
      '^',
      '   ^   ',
      'detected during:',
      '(((((',
      'x(): error:',
      'x(0): error: zero line',
      'a.cu(99999999999999999999): error: huge',
      ':::::',
      'ptxas',
      'nvcc fatal   :',
      '\u0000\u0001\u0002',
      'x'.repeat(100000),
      'a(1): error: e\n' + '  q\n'.repeat(1000),
      Buffer.from([0xff, 0xfe, 0x00]).toString('latin1'),
      undefined,
      null,
      42,
      { toString: () => 'k.cu(1): error: obj' },
    ];
    for (const s of inputs) {
      assert.doesNotThrow(() => {
        const msgs = parseNvccOutput(s as string);
        assert.ok(Array.isArray(msgs));
        classifyFailure(msgs, s as string);
      });
    }
    assert.deepEqual(
      parseNvccOutput('x(0): error: zero line').map(m => m.line),
      [null],
    );
    assert.equal(classifyFailure(undefined as unknown as CompilerMessage[], undefined as unknown as string), null);
  });

  test('random byte soup never throws', () => {
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const alphabet = 'abc.cu():0123456789 #-D^\n\t:error warning note fatal ptxas nvcc "\'`|';
    for (let i = 0; i < 300; i++) {
      let s = '';
      const n = Math.floor(rnd() * 400);
      for (let j = 0; j < n; j++) s += alphabet[Math.floor(rnd() * alphabet.length)];
      assert.doesNotThrow(() => classifyFailure(parseNvccOutput(s), s));
    }
  });
});

describe('sourceColumn', () => {
  test('same line: the caret column', () => {
    const { msgs } = load('undefined_identifier');
    assert.equal(sourceColumn(msgs[0], '    a[i] = x * 2.0f;'), 12);
  });

  test('macro-expanded quote (__shared__ → __attribute__((shared))): realigned from the end', () => {
    const { msgs } = load('shared_init');
    assert.equal(msgs[0].excerpt, '  __attribute__((shared)) float s[4] = {1, 2, 3, 4};');
    const src = fs.readFileSync(path.join(FIXTURES, 'shared_init.cu'), 'utf8').split('\n')[1];
    const col = sourceColumn(msgs[0], src)!;
    assert.equal(src.slice(col - 1, col), 's');
    assert.equal(col, 20);
  });

  test('no way to align: null; gcc columns pass through', () => {
    const { msgs } = load('undefined_identifier');
    assert.equal(sourceColumn(msgs[0], 'something else entirely'), null);
    const inc = load('missing_include').msgs[0];
    assert.equal(sourceColumn(inc, 'whatever'), 10);
  });
});
