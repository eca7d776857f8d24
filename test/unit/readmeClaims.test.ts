// What README.md and docs/*.md say must agree with the code and the data (issue 27).
//
// 1. Every number in README.md's prose is a measurement quoted from docs/measurements.md.
//    Prose: the text outside fenced code blocks, inline code spans, HTML comments and link or image
//    targets (link texts, image alt texts, headings and tables count). A number is a claim when it
//    has two or more digits (1,039 and 1039 alike), a decimal point (2.66), a unit (10%, 27.3 s,
//    168 µs, 4.8 KiB) or a factor sign (×16, 2.66×); a range (0.45–0.49, 1.8–2.9×) is two numbers
//    with the range's unit. Not claims: bare one-digit integers (counts such as "two commands" or
//    "4 warps per SM" are read as words), digits inside names (H100, sm_90, x86-64) and dotted
//    versions (0.25.10). A claim is found when docs/measurements.md (all of it, code and tables
//    included) has the same value with the same unit (a bare number matches any unit).
//    Exempt are only numbers that are not measurements, each checked against its own source
//    (EXEMPT below): the count of sample programs against cuda-samples/, the Node version against
//    package.json.
// 2. Every relative link and image of README.md and docs/*.md resolves to a file (and a heading
//    anchor of it, GitHub's slugs) in the repository.
// 3. No absolute path of a developer machine (/work/, /home/, /root/, /tmp/) in README.md,
//    docs/*.md or the text chunks (tEXt, iTXt, zTXt) of docs/images/*.png.
// 4. What the README says .ci/run runs is what .ci/run runs; the quick start is the two commands.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { REPO_ROOT } from './helpers';

const read = (rel: string) => fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8');
const docsFiles = () =>
  fs
    .readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter(f => f.endsWith('.md'))
    .sort()
    .map(f => `docs/${f}`);

// ------------------------------------------------------------------------------------ prose

/** The prose of a Markdown text: code, comments and link targets blanked (line count kept). */
export function prose(md: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  return md
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, blank)
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/(`+)[^`]*?\1/g, blank)
    .replace(/(\]\()([^)\s]*)(\))/g, (_m, a: string, target: string, b: string) => a + blank(target) + b)
    .replace(/<https?:[^>]*>/g, blank);
}

// ---------------------------------------------------------------------------------- numbers

export interface NumberToken {
  /** As written, e.g. `1,039`, `×16`, `0.45–0.49` (a range gives two tokens with the same text). */
  text: string;
  value: number;
  /** Canonical unit: '' (none), '%', '×', 's', 'ms', 'µs', 'ns', 'min', 'h', 'B', 'KiB', 'MiB', 'GiB'. */
  unit: string;
  /** A claim (see the rule at the top); false for bare one-digit integers. */
  claim: boolean;
  line: number;
}

const NUM = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const UNIT = String.raw`%|×|KiB|MiB|GiB|KB|MB|GB|ms|µs|us|ns|min|s|h|B`;
// ×16 | 16 | 16× | 4.8 KiB | 0.45–0.49 | 1.8–2.9× ; not after a letter, digit, _ . , / # - or another number
const TOKEN = new RegExp(
  String.raw`(?<![\p{L}\p{N}_.,/#\-–])(×\s?)?(${NUM})(?:\s?[–-]\s?(${NUM}))?(?:\s?(${UNIT})(?![\p{L}\p{N}]))?`,
  'gu',
);
const UNIT_ALIASES: Record<string, string> = { us: 'µs', KB: 'KiB', MB: 'MiB', GB: 'GiB' };

export function numbers(text: string): NumberToken[] {
  const out: NumberToken[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const end = (m.index ?? 0) + m[0].length;
    const next = text.slice(end, end + 2);
    // part of a name or a dotted version (2nd, 3D, 0.25.10), unless a unit ended the token
    if (!m[4] && /^[\p{L}\p{N}_]|^\.\d/u.test(next)) continue;
    const unit = m[1] ? '×' : m[4] ? (UNIT_ALIASES[m[4]] ?? m[4]) : '';
    const line = text.slice(0, m.index).split('\n').length;
    for (const raw of [m[2], m[3]].filter((x): x is string => !!x)) {
      const digits = raw.replace(/,/g, '');
      const claim = unit !== '' || digits.includes('.') || digits.length >= 2;
      out.push({ text: m[0].trim(), value: Number(digits), unit, claim, line });
    }
  }
  return out;
}

/** Whether docs/measurements.md's tokens hold this value with the same unit (a bare claim: any unit). */
export function found(claim: NumberToken, data: NumberToken[]): boolean {
  return data.some(d => Math.abs(d.value - claim.value) < 1e-9 && (claim.unit === '' || d.unit === claim.unit));
}

// ------------------------------------------------------------------------------- exemptions

const WORDS = 'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen'.split(' ');
const countOf = (w: string) => (/^\d+$/.test(w) ? Number(w) : WORDS.indexOf(w.toLowerCase()));

/** The sample programs: .cu files with a main() under cuda-samples/ (sub-folders included). */
export function samplePrograms(): string[] {
  const dir = path.join(REPO_ROOT, 'cuda-samples');
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter(f => f.endsWith('.cu') && /\bint\s+main\s*\(/.test(fs.readFileSync(path.join(dir, f), 'utf8')))
    .sort();
}

interface Exemption {
  /** Matches the number in its context (group 1 is the number). */
  pattern: RegExp;
  why: string;
  /** Undefined when the exempted number is right, else what is wrong. */
  check(n: string): string | undefined;
}

const EXEMPT: Exemption[] = [
  {
    pattern: /\b(\d+|[a-z]+)\s+(?:self-checking\s+)?(?:CUDA\s+)?(?:sample\s+)?programs\b/gi,
    why: 'the number of sample programs is a count of cuda-samples/, not a measurement',
    check: n => {
      const progs = samplePrograms();
      return countOf(n) < 0 || countOf(n) === progs.length
        ? undefined
        : `says ${n} sample programs; cuda-samples/ has ${progs.length} .cu programs with main: ${progs.join(', ')}`;
    },
  },
  {
    pattern: /\bNode(?:\.js)?\s+(\d+)\+?/g,
    why: 'the Node version is package.json engines.node, not a measurement',
    check: n => {
      const engines = JSON.parse(read('package.json')).engines.node as string;
      return engines.replace(/\s/g, '') === `>=${n}` ? undefined : `says Node ${n}; package.json engines.node is ${engines}`;
    },
  },
];

/** Claims not found in the data, and exempted numbers whose own check failed. */
export function readmeProblems(readme: string, measurements: string): string[] {
  const text = prose(readme);
  const data = numbers(measurements);
  const problems: string[] = [];
  const exempt = new Set<string>(); // `${line}:${value}` of exempted numbers
  for (const e of EXEMPT)
    for (const m of text.matchAll(e.pattern)) {
      const line = text.slice(0, m.index).split('\n').length;
      if (/^\d+$/.test(m[1])) exempt.add(`${line}:${Number(m[1])}`);
      const wrong = e.check(m[1]);
      if (wrong) problems.push(`README.md:${line}: ${wrong} (${e.why})`);
    }
  for (const t of numbers(text))
    if (t.claim && !exempt.has(`${t.line}:${t.value}`) && !found(t, data))
      problems.push(
        `README.md:${t.line}: "${t.text}" (${t.value}${t.unit ? ` ${t.unit}` : ''}) is not in docs/measurements.md: quote the data, or measure and record it there`,
      );
  return problems;
}

// ------------------------------------------------------------------------------------ links

/** GitHub's heading anchors of a Markdown text (lower case, punctuation dropped, spaces to -, duplicates -1, -2). */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const noCode = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of noCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  for (const m of md.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(m[1]);
  return out;
}

/** Relative link and image targets of a Markdown file that do not resolve, as messages. */
export function brokenLinks(rel: string): string[] {
  const md = read(rel);
  // link targets outside code: blank code and comments, keep targets
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  const text = md
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, blank)
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/(`+)[^`]*?\1/g, blank);
  const problems: string[] = [];
  const targets = [
    ...[...text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map(m => ({ t: m[1], i: m.index ?? 0 })),
    ...[...text.matchAll(/^\[[^\]]+\]:\s+(\S+)/gm)].map(m => ({ t: m[1], i: m.index ?? 0 })),
    ...[...text.matchAll(/<img\s[^>]*src="([^"]+)"/g)].map(m => ({ t: m[1], i: m.index ?? 0 })),
  ];
  for (const { t, i } of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(t)) continue; // https:, mailto:, data:
    const line = text.slice(0, i).split('\n').length;
    const [file, anchor] = t.split('#');
    const target = file ? path.resolve(path.dirname(path.join(REPO_ROOT, rel)), decodeURI(file)) : path.join(REPO_ROOT, rel);
    if (!target.startsWith(REPO_ROOT + path.sep) && target !== REPO_ROOT) {
      problems.push(`${rel}:${line}: ${t} points outside the repository`);
      continue;
    }
    if (!fs.existsSync(target)) {
      problems.push(`${rel}:${line}: ${t}: no such file`);
      continue;
    }
    if (anchor && target.endsWith('.md') && !anchors(fs.readFileSync(target, 'utf8')).has(decodeURIComponent(anchor)))
      problems.push(`${rel}:${line}: ${t}: no heading #${anchor} in ${path.relative(REPO_ROOT, target)}`);
  }
  return problems;
}

// ----------------------------------------------------------------------------- local paths

const LOCAL_PATH = /(?<![\w.~-])\/(?:work|home|root|tmp)\//;

/** The text chunks (tEXt, zTXt, iTXt) of a PNG, decoded as far as they can be. */
export function pngTexts(png: Buffer): string[] {
  const out: string[] = [];
  for (let i = 8; i + 8 <= png.length;) {
    const len = png.readUInt32BE(i);
    const type = png.toString('latin1', i + 4, i + 8);
    const data = png.subarray(i + 8, i + 8 + len);
    if (type === 'tEXt') out.push(data.toString('latin1'));
    if (type === 'zTXt' || type === 'iTXt') {
      out.push(data.toString('latin1'));
      const key = data.indexOf(0);
      try {
        out.push(zlib.inflateSync(data.subarray(key + 2)).toString('utf8'));
      } catch {
        // not compressed (iTXt) or not decodable: the raw text above is checked
      }
    }
    i += 12 + len;
  }
  return out;
}

// -------------------------------------------------------------------------------- .ci/run

/** The npm commands .ci/run runs, in order (`npm ci`, `npm run lint`, `npm test`). */
export function ciCommands(script: string): string[] {
  return script
    .split('\n')
    .map(l => l.replace(/#.*$/, '').trim())
    .filter(l => /^npm\s/.test(l))
    .map(l => l.replace(/\s+/g, ' '));
}

/** Each README sentence that mentions .ci/run, with the npm commands it names in code spans. */
export function ciSentences(readme: string): { sentence: string; commands: string[] }[] {
  const text = readme.replace(/<!--[\s\S]*?-->/g, '').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  return text
    .split(/\n\s*\n|\n(?=\s*(?:#|[-*] |\d+\. |\|))/) // paragraphs, headings, list items, table rows
    .flatMap(p => p.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+(?=[A-Z`*(])/))
    .filter(s => s.includes('.ci/run'))
    .map(sentence => ({ sentence, commands: [...sentence.matchAll(/`(npm [^`]+)`/g)].map(m => m[1].trim()) }));
}

// ----------------------------------------------------------------------------------- tests

describe('README.md and docs/ agree with the code and the data (issue 27)', () => {
  test('every number in the README is a measurement of docs/measurements.md, or an exemption checked at its source', () => {
    const problems = readmeProblems(read('README.md'), read('docs/measurements.md'));
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  test('every relative link and image of README.md and docs/*.md resolves (file and heading)', () => {
    const problems = ['README.md', ...docsFiles()].flatMap(brokenLinks);
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  test('no absolute path of a developer machine in README.md, docs/*.md or the docs images', () => {
    const problems: string[] = [];
    for (const rel of ['README.md', ...docsFiles()])
      read(rel)
        .split('\n')
        .forEach((l, i) => {
          if (LOCAL_PATH.test(l)) problems.push(`${rel}:${i + 1}: ${l.trim().slice(0, 120)}`);
        });
    const images = path.join(REPO_ROOT, 'docs', 'images');
    for (const f of fs.readdirSync(images).filter(x => x.endsWith('.png')))
      for (const t of pngTexts(fs.readFileSync(path.join(images, f))))
        if (LOCAL_PATH.test(t)) problems.push(`docs/images/${f}: text chunk ${JSON.stringify(t.slice(0, 120))}`);
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  test("the README's description of .ci/run names the commands .ci/run runs", () => {
    const ci = ciCommands(read('.ci/run'));
    assert.deepEqual(ci, ['npm ci', 'npm run lint', 'npm test'], 'the rule below assumes these; update both');
    const said = ciSentences(read('README.md'));
    assert.ok(said.length > 0, 'README.md does not say what CI (.ci/run) runs');
    for (const s of said) assert.deepEqual(s.commands, ci, `README.md says: "${s.sentence}"; .ci/run runs ${ci.join(', ')}`);
  });

  test('the quick start is the two commands', () => {
    const block = /^```(?:sh|bash|shell)?\n([\s\S]*?)^```/m.exec(read('README.md'));
    assert.ok(block, 'README.md has no code block');
    const commands = block[1]
      .split('\n')
      .map(l => l.replace(/#.*$/, '').trim())
      .filter(Boolean);
    assert.deepEqual(commands, ['npm ci && npm run demo', 'npm ci && npm test']);
    for (const c of commands) {
      const script = c.split('&& npm run ')[1];
      if (script) assert.ok(JSON.parse(read('package.json')).scripts[script], `package.json has no script ${script}`);
    }
  });
});

describe('the claims rule itself', () => {
  test('numbers: claims, units, ranges, names and versions', () => {
    const t = numbers(
      'H100 sm_90 x86-64 took 27.3 s, ×16 and 2.66×, 0.45–0.49 of it, 1.8–2.9×, 4.8 KiB, 10% of 1,039; 4 warps; 0.25.10 v2',
    );
    assert.deepEqual(
      t.map(x => [x.value, x.unit, x.claim]),
      [
        [27.3, 's', true],
        [16, '×', true],
        [2.66, '×', true],
        [0.45, '', true],
        [0.49, '', true],
        [1.8, '×', true],
        [2.9, '×', true],
        [4.8, 'KiB', true],
        [10, '%', true],
        [1039, '', true],
        [4, '', false],
      ],
    );
  });

  test('prose leaves out code, comments and link targets', () => {
    const p = prose('a `--loop 51` b <!-- 99 --> [x 12](docs/a1.md) ![y](img/2.png)\n```sh\nnpm 42\n```\nend 77');
    assert.deepEqual(
      numbers(p).map(x => x.value),
      [12, 77],
    );
  });

  test('found: the same value and unit; a bare number matches any unit', () => {
    const data = numbers('took 27.3 s, 10 % slower, ×16');
    const [a, b, c, d] = numbers('27.3 s 10% 16 27.3 ms');
    assert.ok(found(a, data) && found(b, data) && found(c, data));
    assert.ok(!found(d, data));
  });

  test('anchors follow GitHub slugs', () => {
    const a = anchors('# `sass --listing`: the annotated SASS\n## Is the best really faster? (`confidence`)\n## A\n## A\n');
    assert.deepEqual([...a], ['sass---listing-the-annotated-sass', 'is-the-best-really-faster-confidence', 'a', 'a-1']);
  });

  test('the sample-count check reads cuda-samples/', () => {
    const n = samplePrograms().length;
    assert.ok(n >= 10, `${n} programs`);
    assert.deepEqual(readmeProblems(`${n} self-checking CUDA programs`, ''), []);
    const wrong = WORDS[n === 10 ? 11 : 10];
    assert.match(readmeProblems(`${wrong} self-checking CUDA programs`, '').join('\n'), new RegExp(`says ${wrong} sample programs`));
  });

  test('the .ci/run rule reads the sentence', () => {
    assert.deepEqual(ciCommands('set -e\n# npm x\nnpm ci\nnpm run lint\nnpm test\n'), ['npm ci', 'npm run lint', 'npm test']);
    const [s] = ciSentences('Intro. CI (`.ci/run`) runs `npm ci`, `npm run lint` and\n`npm test`. Next `npm x`.\n\n- `npm y`');
    assert.deepEqual(s.commands, ['npm ci', 'npm run lint', 'npm test']);
    const [old] = ciSentences(
      '```sh\nnpm ci && npm test\n```\n`.ci/run` runs exactly these commands on a clean clone.\n\n## Next\n`npm z`',
    );
    assert.deepEqual(old.commands, []);
  });
});
