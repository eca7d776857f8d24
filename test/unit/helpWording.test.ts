// The words of every command's --help (issue 43): the default timer (Unroll Lens' CUPTI timer) is
// named first and ncu as the --timer ncu case, and an option that may be given several times says
// "(repeatable)" once (`--sbatch-arg … (repeatable) (repeatable)` was printed). The defaults the
// help prints are checked in helpDefaults.test.ts, the docs/cli.md copies in cli.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../../src/cli/main';

/** The option rows of a help text, each as one line (its wrapped help folded): `--name` → text. */
function optionRowsOf(help: string): Map<string, string> {
  const rows = new Map<string, string>();
  const options = help.slice(help.indexOf('\nOptions:\n') + '\nOptions:\n'.length, help.indexOf('\nExit codes:'));
  for (const row of options.split(/\n(?= {2}-)/)) {
    // `--loops, --loop LINE`: the name, not its alias; `-h, --help`: --help
    const name = /^\s*(?:-\w, )?(--[\w-]+)/.exec(row)?.[1];
    if (name) rows.set(name, row.replace(/\s+/g, ' ').trim());
  }
  return rows;
}

describe('--help wording', () => {
  test('every option row is read, of every command', () => {
    for (const c of COMMANDS) {
      const rows = optionRowsOf(c.help());
      for (const name of Object.keys(c.options)) assert.ok(rows.has(`--${name}`), `${c.name}: no row for --${name}`);
    }
  });

  test('no option says "(repeatable)" twice; every list option says it once, and only list options', () => {
    let lists = 0;
    for (const c of COMMANDS) {
      const rows = optionRowsOf(c.help());
      for (const [name, spec] of Object.entries(c.options)) {
        const row = rows.get(`--${name}`) ?? '';
        const times = row.split('(repeatable)').length - 1;
        assert.equal(times, spec.type === 'list' ? 1 : 0, `${c.name} --${name}: "(repeatable)" ${times} times in: ${row}`);
        if (spec.type === 'list') lists++;
      }
    }
    assert.ok(lists >= 2, `only ${lists} list options found (sweep has --param and --sbatch-arg): the walk missed them`);
  });

  test('--stalls names CUPTI PC sampling (the default) first and ncu as the --timer ncu case', () => {
    // (sass --stalls FILE reads a saved ncu source page: ncu is what it means)
    const withStalls = COMMANDS.filter(c => c.options.stalls?.value === 'on|off');
    assert.deepEqual(withStalls.map(c => c.name).sort(), ['bench', 'compare', 'sweep']);
    for (const c of withStalls) {
      const row = optionRowsOf(c.help()).get('--stalls')!;
      const cupti = row.indexOf('CUPTI PC sampling');
      assert.ok(cupti > 0, `${c.name}: ${row}`);
      const firstNcu = row.search(/\bncu\b/);
      assert.ok(firstNcu > cupti, `${c.name}: ncu named before the CUPTI timer: ${row}`);
      // every mention of ncu is the --timer ncu case
      assert.match(row.slice(cupti), /with --timer ncu, ncu's warp-state metrics/, `${c.name}: ${row}`);
      assert.doesNotMatch(row, /with --timer cupti/, `${c.name}: the default named as the alternative: ${row}`);
    }
  });

  test("--source-stalls: the timed run's CUPTI PC samples first, the extra ncu run with --timer ncu", () => {
    for (const c of COMMANDS.filter(x => 'source-stalls' in x.options)) {
      const row = optionRowsOf(c.help()).get('--source-stalls')!;
      assert.ok(row.indexOf('CUPTI PC samples') < row.search(/\bncu\b/), `${c.name}: ${row}`);
      assert.doesNotMatch(row, /with --timer cupti/, `${c.name}: ${row}`);
    }
  });
});
