// Every default a --help prints is the one in force (issue 43): `bench --help` showed
// `--clock-control (default: base)` and `--cache-control (default: all)`, values the default
// timer refuses. The test reads each command's help as printed, and for every option whose
// default is a value of the option, runs the command's own argument resolution (argsOf: the one
// place a flag becomes a setting) with and without that value: the settings must be equal. A
// default that holds only beside another option ("base with --timer ncu; …") is checked beside
// it, and must not hold without it. The docs/cli.md copies of the help are checked in cli.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'path';
import { COMMANDS } from '../../src/cli/main';
import { SAMPLES } from './helpers';

const cliff = path.join(SAMPLES, 'icache_cliff.cu');
/** The words each command needs besides the option under test. */
const BASE: Record<string, string[]> = {
  sass: [cliff, '--loop', '72'],
  bench: [cliff, '--loop', '72'],
  sweep: [cliff],
  compare: [cliff, '--kernels', 'hot_loop'],
};

/** `--name VALUE  help … (default: X)` rows of a help text: name → the default as printed (spaces folded). */
export function printedDefaults(help: string): Map<string, string> {
  const rows = new Map<string, string>();
  const options = help.slice(help.indexOf('\nOptions:\n'), help.indexOf('\nExit codes:'));
  for (const row of options.split(/\n(?= {2}-)/)) {
    const name = /^\s*(--[\w-]+)/.exec(row)?.[1];
    const text = row.replace(/\s+/g, ' ');
    const d = /\(default: (.*)\)$/.exec(text.trim());
    if (name && d) rows.set(name, d[1]);
  }
  return rows;
}

/** Whether `value` is something the option takes, by its placeholder: `base|none`, `N`, `S`, `GB`, `LIST`. */
function isValueOf(placeholder: string, value: string): boolean {
  if (placeholder.includes('|') && !placeholder.includes('…')) return placeholder.split('|').includes(value);
  if (['N', 'S', 'GB'].includes(placeholder)) return /^\d+(\.\d+)?$/.test(value);
  if (placeholder === 'LIST') return /^[\w,]+$/.test(value);
  return false;
}

function resolve(cmd: (typeof COMMANDS)[number], argv: string[]): unknown {
  try {
    return cmd.argsOf(argv);
  } catch (e) {
    return { refused: (e as Error).message };
  }
}

describe('the defaults --help prints are the ones in force', () => {
  for (const cmd of COMMANDS.filter(c => BASE[c.name])) {
    test(`${cmd.name}`, () => {
      const base = BASE[cmd.name];
      const plain = resolve(cmd, base);
      assert.ok(plain && !('refused' in (plain as object)), `${cmd.name} ${base.join(' ')}: ${JSON.stringify(plain)}`);
      const printed = printedDefaults(cmd.help());
      let checked = 0;
      for (const [name, d] of printed) {
        assert.notEqual(d.trim(), '', `${cmd.name} ${name}: an empty default`);
        const spec = cmd.options[name.slice(2)];
        const placeholder = spec?.value ?? '';
        // "base with --timer ncu; the CUPTI timer, the default, …": holds beside --timer ncu, not without it
        const beside = /^(\S+) with (--[\w-]+) (\S+);/.exec(d);
        if (beside && isValueOf(placeholder, beside[1])) {
          const other = [beside[2], beside[3]];
          assert.deepEqual(resolve(cmd, [...base, ...other, name, beside[1]]), resolve(cmd, [...base, ...other]), `${cmd.name} ${name}`);
          assert.notDeepEqual(
            resolve(cmd, [...base, name, beside[1]]),
            plain,
            `${cmd.name} ${name} ${beside[1]} is not the default without ${other.join(' ')}`,
          );
          checked++;
        } else if (isValueOf(placeholder, d)) {
          // an option that goes with a switch (--gres-gpus with --slurm) is compared beside it
          const needs = /^--[\w-]+ needs (--[\w-]+)$/.exec(String((resolve(cmd, [...base, name, d]) as { refused?: string }).refused));
          const context = needs ? [...base, needs[1]] : base;
          assert.deepEqual(
            resolve(cmd, [...context, name, d]),
            resolve(cmd, context),
            `${cmd.name}: ${name} ${d} is printed as the default but is not what runs`,
          );
          checked++;
        }
      }
      assert.ok(checked >= 3, `${cmd.name}: only ${checked} defaults checked`);
    });
  }

  test('the help as printed before the fix would have failed: ncu defaults under the CUPTI timer', () => {
    const bench = COMMANDS.find(c => c.name === 'bench')!;
    const plain = resolve(bench, BASE.bench);
    // what `(default: base)` claimed: passing it explicitly is refused with the default timer
    assert.match(String((resolve(bench, [...BASE.bench, '--clock-control', 'base']) as { refused?: string }).refused), /--timer cupti/);
    assert.match(String((resolve(bench, [...BASE.bench, '--cache-control', 'all']) as { refused?: string }).refused), /--timer cupti/);
    assert.ok(plain);
  });
});

describe('one spelling of the loop option across commands (issue 43)', () => {
  test('sweep takes --loop as bench does, and --loops; the help names both', () => {
    const sweep = COMMANDS.find(c => c.name === 'sweep')!;
    const one = sweep.argsOf([cliff, '--loop', '72']) as { loops: number[] };
    const two = sweep.argsOf([cliff, '--loops=70,72']) as { loops: number[] };
    assert.deepEqual(one.loops, [72]);
    assert.deepEqual(two.loops, [70, 72]);
    assert.deepEqual(sweep.argsOf([cliff, '--loop=70,72']), two);
    assert.match(sweep.help(), /--loops, --loop LINE\[,LINE…\]/);
  });
});
