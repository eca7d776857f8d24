// Results panel in real headless Chromium (Debian's, driven by playwright-core): the standalone
// report (reportHtml with the built assets, opened from disk) and a page that stands in for the
// VS Code webview host (panelHtml's page under its strict CSP, acquireVsCodeApi stubbed to record
// messages and state, theme variables set the way VS Code sets them), for every fixture in
// test/fixtures/sweep/. Expected table text is computed here from the fixture with this file's
// own formatting rules, not with the webview's code.
//
//   npm run build && node --test test/webview/panel.test.mjs      (or npm run test:webview)
//   the docs' pictures of the panel: npm run docs:images (scripts/docs-images.mjs, same page)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  ARTIFACTS,
  FIXTURES,
  ROOT,
  THEMES,
  assets,
  closeBrowser,
  fixtureNames,
  fixtures,
  launchBrowser,
  makeNonce,
  openHost,
  openReport,
  panelHtml,
  postResult,
  reportHtml,
  require,
  settle,
} from './host.mjs';
import { NO_BROWSER } from './host.mjs';

// Without a browser (a machine without root and without Chromium, issue 27) the tests that drive
// one are skipped with the reason, and counted as skipped; the two that only read the HTML run.
const browserTest = (name, fn) => test(name, { skip: NO_BROWSER }, fn);

async function assertClean(page, log) {
  const violations = await page.evaluate(() => window.__violations);
  assert.deepEqual(violations, [], 'CSP violations');
  assert.deepEqual(log.errors, [], 'console errors');
  assert.deepEqual(log.dialogs, [], 'dialogs (alert) opened');
}

// ------------------------------------------------------------------------------------------ expectations

const NONE = '—';
const isNum = v => typeof v === 'number' && Number.isFinite(v);
const int = v => (isNum(v) ? v.toLocaleString('en-US', { maximumFractionDigits: 0 }) : NONE);
const us = v => (isNum(v) ? (v * 1000).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : NONE);
const pct = (v, d = 1) => (isNum(v) ? `${(v * 100).toFixed(d)}%` : NONE);
const pct100 = v => (isNum(v) ? `${v.toFixed(1)}%` : NONE);
const factor = f => (f === null || f === undefined ? NONE : typeof f === 'number' ? `×${f}` : f);

/** The stall reasons the panel stacks: no_instruction, the 4 largest by mean share, "other". */
function stallGroups(r) {
  const measured = r.variants.filter(v => v.status === 'ok' && v.stallShare);
  if (!measured.length) return { groups: [], top: [] };
  const mean = {};
  for (const v of measured)
    for (const [k, s] of Object.entries(v.stallShare)) if (k !== 'no_instruction') mean[k] = (mean[k] ?? 0) + s / measured.length;
  const ranked = Object.entries(mean)
    .filter(([, m]) => m > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([k]) => k);
  const top = ranked.slice(0, 4);
  return { groups: ['no_instruction', ...top, ...(ranked.length > 4 ? ['other'] : [])], top };
}

const range = p => (p.low.toFixed(2) === p.high.toFixed(2) ? `${p.low.toFixed(2)}×` : `${p.low.toFixed(2)}–${p.high.toFixed(2)}×`);
/** The i-cache cell (issue 13): the measured slowdown with the prediction beside it, else the predicted range. */
function icacheCell(c) {
  if (!c) return NONE;
  if (c.shown === 'measured' && c.measured)
    return `${c.measured.slowdown.toFixed(2)}× measured${c.predicted ? ` (predicted ${range(c.predicted)})` : ''}`;
  return c.predicted ? `${range(c.predicted)} predicted` : NONE;
}

/** `void chain<64>(float const*, float*)` → `chain<64>` (the fixtures' names have no nested parentheses). */
const shortName = d => d.replace(/\([^()]*\)$/, '').replace(/^[^<]*\s(?=[^\s<]+(<|$))/, '');

/** data-col → expected cell text, per variant id, for every column the table should have. */
function expectedTable(r) {
  const byId = new Map(r.variants.map(v => [v.id, v]));
  const lines = r.loops.map(l => String(l.line));
  const { groups, top } = stallGroups(r);
  const base = byId.get(r.baseline);
  const rows = new Map();
  for (const v of r.variants) {
    const ref = v.identicalTo ? byId.get(v.identicalTo) : null;
    const ok = v.status === 'ok';
    const val = k => (isNum(v[k]) ? v[k] : ok && ref && isNum(ref[k]) ? ref[k] : null);
    const c = {};
    c.label = v.label;
    for (const l of lines) {
      const written = r.loops.find(x => String(x.line) === l).written;
      c[`factor:${l}`] = l in v.factors ? factor(v.factors[l]) : Object.keys(v.factors).length ? NONE : `${factor(written)} (written)`;
    }
    // The instantiation column (issue 22): a template kernel's rows name theirs, `chain<64>` out of
    // `void chain<64>(float const*, float*)` (return type and parameters dropped).
    const names = new Set(r.variants.filter(x => x.instantiation).map(x => shortName(x.instantiation)));
    if (names.size > 1 || [...names].some(n => n.includes('<'))) c.instantiation = v.instantiation ? shortName(v.instantiation) : NONE;
    c.status = v.status;
    c.kernelInstructions = int(val('kernelInstructions'));
    c.kernelBytes = int(val('kernelBytes'));
    for (const l of lines) {
      const li = v.loopInstructions[l] ?? null;
      c[`loopInstructions:${l}`] = int(li);
      c[`loopBytes:${l}`] = int(li === null ? null : li * 16);
      const eu = v.effectiveUnroll[l] ?? null;
      c[`effectiveUnroll:${l}`] = eu === null ? NONE : `×${eu}${v.fullyUnrolled[l] ? ' (full)' : ''}`;
    }
    c.registers = int(val('registers'));
    c.spillStores = int(val('spillStores'));
    c.spillLoads = int(val('spillLoads'));
    c.occupancy = pct(val('occupancy'));
    if (!r.static) {
      c.achievedOccupancy = pct100(val('achievedOccupancy'));
      c.samples = ok ? int(val('samples')) : NONE;
      c.medianMs = us(val('medianMs'));
      c.q1Ms = us(val('q1Ms'));
      c.q3Ms = us(val('q3Ms'));
      c.iqrMs = us(val('iqrMs'));
      c.cv = pct(val('cv'), 2);
      c.speedup = isNum(val('speedup')) ? `${val('speedup').toFixed(3)}×` : NONE;
      const q1 = val('q1Ms');
      const q3 = val('q3Ms');
      c.speedupIqr = ok && q1 && q3 && base?.medianMs ? `${(base.medianMs / q3).toFixed(3)}–${(base.medianMs / q1).toFixed(3)}×` : NONE;
      c.withinNoise = v.withinNoise === null ? NONE : v.withinNoise ? 'yes' : 'no';
      const s = ok ? v.stallShare : null;
      for (const g of groups) {
        c[`stall:${g}`] = !s
          ? NONE
          : pct(
              g === 'other'
                ? Object.entries(s)
                    .filter(([k]) => k !== 'no_instruction' && !top.includes(k))
                    .reduce((a, [, x]) => a + x, 0)
                : (s[g] ?? 0),
            );
      }
      const topStall = s
        ? Object.entries(s)
            .filter(([k]) => k !== 'selected')
            .sort((a, b) => b[1] - a[1])[0]
        : null;
      c.topStall = topStall ? `${topStall[0]} (${pct(topStall[1])})` : NONE;
    }
    if (r.variants.some(x => x.icache)) c.icache = icacheCell(v.icache ?? (ok && ref ? ref.icache : null));
    c.identicalTo = ref ? ref.label : (v.identicalTo ?? NONE);
    c.message = v.message ?? '';
    rows.set(v.id, c);
  }
  return rows;
}

/** The table as rendered: header column ids, and per row its id and cell texts by column. */
async function readTable(page) {
  return page.evaluate(() => {
    const cols = [...document.querySelectorAll('.ul-table thead th')].map(th => th.getAttribute('data-col'));
    const rows = [...document.querySelectorAll('.ul-table tbody tr')].map(tr => ({
      id: tr.getAttribute('data-variant'),
      selected: tr.getAttribute('aria-selected'),
      cells: Object.fromEntries(
        [...tr.cells].map(td => [td.getAttribute('data-col'), td.querySelector('.ul-label')?.textContent ?? td.textContent]),
      ),
    }));
    return { cols, rows };
  });
}

async function checkTable(page, r) {
  const expected = expectedTable(r);
  const { cols, rows } = await readTable(page);
  assert.deepEqual(
    rows.map(x => x.id),
    r.variants.map(v => v.id),
    'one row per variant, in result order',
  );
  assert.deepEqual(new Set(cols), new Set(Object.keys(expected.get(r.variants[0].id))), 'table columns');
  for (const row of rows) assert.deepEqual(row.cells, expected.get(row.id), `row ${row.id}`);
}

/** Per chart: its legend texts, axis titles, and whether sampled pixels show what it drew. */
async function readCharts(page) {
  return page.evaluate(() => {
    const out = {};
    for (const [id, chart] of Object.entries(window.__unrollLensCharts)) {
      const canvas = chart.canvas;
      const ctx = canvas.getContext('2d');
      const img = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < img.length; i += 4) if (img[i] > 0) painted++;
      const dpr = canvas.width / canvas.clientWidth;
      const alphaAt = (x, y) => ctx.getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data[3];
      // Every drawn bar / point: the pixel at its centre is painted (not an empty canvas).
      const marks = [];
      // not drawn: every plotted value the same (issue 43; test/webview/layout.test.mjs checks the rule)
      const flat = canvas.closest('[data-flat]') !== null;
      chart.data.datasets.forEach((ds, di) => {
        if (flat || !chart.isDatasetVisible(di)) return;
        chart.getDatasetMeta(di).data.forEach((el, i) => {
          const v = ds.data[i];
          if (v === null || v === undefined || v === 0) return;
          const y = el.base !== undefined && ds.type !== 'line' ? (el.y + el.base) / 2 : el.y;
          marks.push({ di, i, alpha: alphaAt(el.x, y) });
        });
      });
      const empty = document.createElement('canvas');
      empty.width = canvas.width;
      empty.height = canvas.height;
      out[id] = {
        flat,
        painted: painted / (canvas.width * canvas.height),
        differsFromEmpty: canvas.toDataURL() !== empty.toDataURL(),
        marks,
        legend: chart.legend.legendItems.map(l => l.text),
        titles: Object.fromEntries(
          Object.entries(chart.scales).map(([k, s]) => [
            k,
            s.options.display !== false && s.options.title?.display ? s.options.title.text : null,
          ]),
        ),
        datasets: chart.data.datasets.map(d => ({ label: d.label, n: d.data.filter(v => v !== null).length, data: [...d.data] })),
        labels: chart.data.labels,
        decor: chart.options.plugins.ulDecor
          ? {
              refLines: chart.options.plugins.ulDecor.refLines.map(l => ({ value: l.value, label: l.label })),
              whiskers: chart.options.plugins.ulDecor.whiskers
                ? { low: chart.options.plugins.ulDecor.whiskers.low, high: chart.options.plugins.ulDecor.whiskers.high }
                : null,
            }
          : null,
        patterns: chart.data.datasets.map(d => (Array.isArray(d.backgroundColor) ? d.backgroundColor.map(c => typeof c !== 'string') : [])),
        colors: chart.data.datasets.map(d =>
          Array.isArray(d.backgroundColor) ? (d.backgroundColor.find(c => typeof c === 'string') ?? null) : (d.borderColor ?? null),
        ),
        tickColor: chart.options.scales.x.ticks.color,
        borderColors: chart.data.datasets[0]?.borderColor,
        borderWidths: chart.data.datasets[0]?.borderWidth,
      };
    }
    return out;
  });
}

/** A GPU sweep over two loop axes (not a benchmark's one tied axis), at most 8 combinations of extra-axis values. */
function twoLoopAxes(r) {
  const combos = Object.values(r.params).reduce((n, vs) => n * vs.length, 1);
  return !r.static && r.origin !== 'bench' && r.loops.length === 2 && combos <= 8;
}

/** The line under every chart's title: GPU · tool · clocks · caches, or SASS only for a static result. */
function expectedConditions(r) {
  if (r.static) return `SASS only (${r.arch}, no GPU run): compiler output, no timings`;
  const m = r.measurement;
  const base = m ? m.clocks === 'base' : r.clockControl ? r.clockControl === 'base' : null;
  return [
    r.gpu,
    m?.tool === 'cupti' ? 'CUPTI timer (program run as itself)' : 'ncu',
    base === null ? 'clocks not recorded' : base ? 'clocks locked to base' : 'clocks as-is (not locked)',
    m?.caches === 'warm' ? 'caches warm (as the program runs)' : 'caches flushed before each launch',
  ].join(' · ');
}

async function checkConditions(page, r, ids) {
  const shown = await page.evaluate(() =>
    [...document.querySelectorAll('figure[data-chart]')].map(f => {
      const p = f.querySelector('h2 + .ul-conditions');
      return { id: f.getAttribute('data-chart'), text: p?.textContent ?? null, visible: !!p && p.offsetParent !== null };
    }),
  );
  assert.deepEqual(shown.map(c => c.id).sort(), [...ids].sort(), 'a conditions line on every chart');
  for (const c of shown) {
    assert.equal(c.text, expectedConditions(r), `${c.id}: measurement conditions under the title`);
    assert.ok(c.visible, `${c.id}: conditions visible`);
    if (r.static) assert.doesNotMatch(c.text, /clock|cache/, `${c.id}: a static result says nothing of clocks`);
  }
}

const sameFactor = (a, b) => String(a) === String(b);

/** The heatmap's cells as the test expects them, from the result alone. */
function expectedHeatmap(r) {
  const [lx, ly] = r.loops.map(l => String(l.line));
  const axis = line => {
    const vs = [...r.factors];
    for (const v of r.variants) if (line in v.factors && !vs.some(f => sameFactor(f, v.factors[line]))) vs.push(v.factors[line]);
    return vs;
  };
  const xs = axis(lx);
  const ys = axis(ly);
  let combos = [{}];
  for (const [k, vs] of Object.entries(r.params)) combos = combos.flatMap(c => vs.map(v => ({ ...c, [k]: v })));
  const byId = new Map(r.variants.map(v => [v.id, v]));
  const grids = combos.map(params =>
    ys.flatMap((fy, yi) =>
      xs.map((fx, xi) => {
        const v = r.variants.find(
          x =>
            sameFactor(x.factors[lx], fx) &&
            sameFactor(x.factors[ly], fy) &&
            Object.entries(params).every(([k, val]) => x.params[k] === val),
        );
        const ref = v?.identicalTo ? byId.get(v.identicalTo) : null;
        const ok = v?.status === 'ok';
        const speedup = ok ? (v.speedup ?? ref?.speedup ?? null) : null;
        let empty = null;
        if (!v)
          empty = !r.complete
            ? 'not evaluated'
            : r.strategy === 'exhaustive'
              ? 'not in the result'
              : `the ${r.strategy} search did not visit`;
        else if (v.status === 'pending') empty = 'pending';
        else if (!ok) empty = `${v.status}: ${v.message}`;
        else if (speedup === null) empty = 'no timing';
        const noise = empty === null && (v.withinNoise ?? ref?.withinNoise) === true;
        return { xi, yi, id: v?.id ?? null, empty, speedup, noise, best: !!v && v.id === r.best };
      }),
    ),
  );
  return { lx, ly, xs, ys, combos, grids };
}

async function checkHeatmap(page, r) {
  const e = expectedHeatmap(r);
  const dom = await page.evaluate(() => {
    const card = document.querySelector('figure[data-chart="heatmap"]');
    return {
      title: card.querySelector('h2').textContent,
      legend: [...card.querySelectorAll('.ul-heat-legend li')].map(li => li.textContent),
      tables: [...card.querySelectorAll('table.ul-heatmap')].map(t => ({
        caption: t.querySelector('caption')?.textContent ?? '',
        xname: t.querySelector('.ul-heat-xname').textContent,
        yname: t.querySelector('.ul-heat-yname').textContent,
        x: [...t.querySelectorAll('th.ul-heat-x')].map(th => th.textContent),
        y: [...t.querySelectorAll('th.ul-heat-y')].map(th => th.textContent),
        cells: [...t.querySelectorAll('td.ul-heat-cell')].map(td => ({
          xi: Number(td.dataset.xi),
          yi: Number(td.dataset.yi),
          id: td.dataset.variant ?? null,
          cls: td.className.split(' '),
          value: td.querySelector('.ul-heat-value')?.textContent ?? null,
          title: td.title,
          level: Number(td.dataset.level),
          bg: getComputedStyle(td).backgroundColor,
        })),
      })),
    };
  });
  assert.equal(dom.title, 'Speedup vs the file as written');
  for (const t of ['Within noise of the file as written', 'Best (', 'Empty: not measured or failed']) {
    assert.ok(
      dom.legend.some(l => l.startsWith(t)),
      `heatmap legend: ${t}`,
    );
  }
  assert.equal(dom.tables.length, e.combos.length, 'one grid per combination of the extra axes');
  const bgs = { slower: new Set(), neutral: new Set(), faster: new Set() };
  dom.tables.forEach((t, g) => {
    assert.equal(
      t.caption,
      Object.entries(e.combos[g])
        .map(([k, v]) => `${k}=${v}`)
        .join(' · '),
      'grid caption',
    );
    assert.match(t.xname, new RegExp(`^Loop L${e.lx} unroll`), 'x axis: the first loop');
    assert.match(t.yname, new RegExp(`^Loop L${e.ly} unroll`), 'y axis: the second loop');
    assert.deepEqual(t.x, e.xs.map(factor), 'x labels: the first loop factors in axis order');
    assert.deepEqual(t.y, e.ys.map(factor), 'y labels: the second loop factors in axis order');
    assert.equal(t.cells.length, e.xs.length * e.ys.length, 'one cell per point');
    t.cells.forEach((c, i) => {
      const x = e.grids[g][i];
      const at = `grid ${g} cell ${factor(e.xs[x.xi])}, ${factor(e.ys[x.yi])}`;
      assert.deepEqual([c.xi, c.yi, c.id], [x.xi, x.yi, x.id], at);
      assert.equal(c.cls.includes('ul-heat-best'), x.best, `${at}: best outlined`);
      if (x.empty !== null) {
        assert.equal(c.value, null, `${at}: empty`);
        assert.ok(c.cls.includes('ul-heat-empty'), `${at}: empty cell`);
        assert.ok(c.title.includes(x.empty), `${at}: why it is empty (${c.title})`);
        return;
      }
      assert.equal(c.value, `${x.speedup.toFixed(3)}×`, `${at}: value`);
      assert.equal(c.cls.includes('ul-heat-noise'), x.noise, `${at}: within-noise mark`);
      const side = x.noise || x.speedup === 1 ? 0 : Math.sign(x.speedup - 1);
      assert.equal(Math.sign(c.level), side, `${at}: colour side`);
      bgs[side < 0 ? 'slower' : side > 0 ? 'faster' : 'neutral'].add(c.bg);
    });
  });
  assert.equal(
    dom.tables.flatMap(t => t.cells).filter(c => c.cls.includes('ul-heat-best')).length,
    e.grids.flat().some(c => c.best) ? 1 : 0,
  );
  // The two hues and the neutral grey are different colours.
  for (const [a, b] of [
    ['slower', 'faster'],
    ['slower', 'neutral'],
    ['faster', 'neutral'],
  ]) {
    for (const c of bgs[a]) assert.ok(!bgs[b].has(c), `${a} and ${b} cells differ in colour (${c})`);
  }
}

async function checkCharts(page, r) {
  const charts = await readCharts(page);
  const icache = r.variants.some(v => v.icache) ? ['icache'] : [];
  // A GPU sweep of two loop axes draws its speedups as a heatmap (an HTML table), not as chart.js bars.
  const heat = twoLoopAxes(r);
  // executed instructions: only where ncu counted some (a variant or a compared kernel)
  const executed = r.variants.some(v => isNum(v.executedInstructions) || v.instantiations?.some(x => isNum(x.executedInstructions)))
    ? ['executed']
    : [];
  const ids = r.static
    ? [...icache, 'size', 'resources', 'unroll']
    : [...(heat ? [] : ['speedup']), ...executed, 'stalls', ...icache, 'size', 'resources'];
  assert.deepEqual(Object.keys(charts).sort(), [...ids].sort(), 'charts shown');
  await checkConditions(page, r, heat ? ['heatmap', ...ids] : ids);
  if (heat) await checkHeatmap(page, r);
  else assert.equal(await page.locator('[data-chart="heatmap"]').count(), 0, 'no heatmap: bars');
  const ok = r.variants.filter(v => v.status === 'ok');
  for (const [id, c] of Object.entries(charts)) {
    if (c.flat) continue;
    assert.ok(c.differsFromEmpty && c.painted > 0.02, `${id}: canvas is blank (${(c.painted * 100).toFixed(2)}% painted)`);
    assert.ok(c.marks.length > 0, `${id}: no bars or points drawn`);
    for (const m of c.marks) assert.ok(m.alpha > 0, `${id}: dataset ${m.di} variant ${m.i}: nothing painted at the bar`);
    assert.equal(c.titles.x, 'Variant', `${id}: x axis title`);
    for (const [axis, title] of Object.entries(c.titles)) assert.ok(title && title.length > 3, `${id}: axis ${axis} has no title`);
    assert.ok(c.legend.length >= 2, `${id}: legend`);
    assert.equal(c.labels.length, r.variants.length, `${id}: one category per variant`);
  }
  const label = id => charts[ids[0]].labels[r.variants.findIndex(v => v.id === id)];
  for (const v of r.variants) {
    if (v.identicalTo) assert.ok(label(v.id).includes(`= ${r.variants.find(x => x.id === v.identicalTo).label}`), `${v.id}: "= ×N" label`);
    if (v.status !== 'ok') assert.ok(label(v.id).includes(v.status), `${v.id}: status in its axis label`);
  }
  if (r.variants.some(v => v.identicalTo))
    assert.ok(
      charts.size.legend.some(t => t.startsWith('Identical code')),
      'identical code legend entry',
    );

  const size = charts.size;
  // One loop: "Loop SASS bytes"; a multi-loop sweep has one series per loop ("Loop L70 SASS bytes").
  const loopSeries = r.loops.length > 1 ? r.loops.map(l => `Loop L${l.line} SASS bytes`) : ['Loop SASS bytes'];
  assert.ok(
    size.legend.includes('Kernel SASS bytes') && loopSeries.every(t => size.legend.includes(t)),
    `size legend: ${size.legend.join(', ')}`,
  );
  const budgetLabel = size.legend.find(t => t.startsWith('I-cache budget'));
  assert.ok(budgetLabel, 'i-cache budget legend entry');
  assert.deepEqual(
    size.decor.refLines.map(l => l.value),
    [r.icacheBudgetBytes],
    'budget line at icacheBudgetBytes',
  );
  assert.equal(size.datasets[0].n, ok.length, 'kernel bytes bar per finished variant, none for failed/pending ones');

  if (icache.length) {
    // The i-cache chart: solid bars measured, hatched bars predicted, whiskers the predicted range.
    const ic = charts.icache;
    for (const t of ['Predicted (no GPU run yet)', 'Predicted range (i-cache model)', 'No slowdown = 1×']) {
      assert.ok(ic.legend.includes(t), `icache legend: ${t}`);
    }
    assert.ok(
      ic.legend.some(t => t.startsWith('Measured (median ÷')),
      'icache legend: measured',
    );
    assert.deepEqual(
      ic.decor.refLines.map(l => l.value),
      [1],
    );
    r.variants.forEach((v, i) => {
      const c = v.icache ?? (v.status === 'ok' && v.identicalTo ? r.variants.find(x => x.id === v.identicalTo).icache : null) ?? null;
      assert.equal(ic.decor.whiskers.low[i], c?.predicted?.low ?? null, `${v.id}: predicted low`);
      assert.equal(ic.decor.whiskers.high[i], c?.predicted?.high ?? null, `${v.id}: predicted high`);
      if (c) assert.equal(ic.patterns[0][i], !(c.shown === 'measured' && c.measured), `${v.id}: hatched when predicted`);
    });
  }

  const res = charts.resources;
  for (const t of ['Registers / thread', 'Spill bytes (stores + loads)', 'Theoretical occupancy (%)']) {
    assert.ok(res.legend.includes(t), `resources legend: ${t}`);
  }
  assert.ok(res.titles.y1 === 'Occupancy (%)', 'second y axis');

  if (r.static) {
    // one loop: one bar series and its crosses; several: a series per loop, then their crosses
    const lines = r.loops.map(l => l.line);
    assert.deepEqual(
      charts.unroll.legend.slice(0, 2 * lines.length),
      lines.length === 1
        ? ['Effective unroll (nvcc)', 'Requested factor']
        : [...lines.map(l => `L${l} effective unroll`), ...lines.map(l => `L${l} requested`)],
      'unroll legend',
    );
    return charts;
  }
  // achieved occupancy only where ncu counted some (the CUPTI timer alone counts none), its source in the caption
  const counted = r.variants.some(v => isNum(v.achievedOccupancy) || v.instantiations?.some(x => isNum(x.achievedOccupancy)));
  assert.equal(res.legend.includes('Achieved occupancy (%, ncu)'), counted, `achieved occupancy in the legend: ${res.legend.join(', ')}`);
  const resCaption = await page.locator('figure[data-chart="resources"] figcaption').textContent();
  assert.match(resCaption, counted ? /; achieved occupancy (measured|counted) by ncu / : /; no achieved occupancy/);
  const st = charts.stalls;
  const { groups } = stallGroups(r);
  assert.equal(st.legend[0], 'no_instruction (i-cache miss)', 'no_instruction first in the stack');
  assert.equal(st.datasets.length, groups.length);
  const others = st.colors.slice(1);
  assert.ok(!others.includes(st.colors[0]), 'no_instruction has a colour of its own');
  if (heat) return charts;
  const sp = charts.speedup;
  for (const t of [
    'Faster than the baseline',
    'Slower than the baseline',
    'Within noise (same code, or IQRs within 3 % drift)',
    'IQR whiskers',
  ]) {
    assert.ok(sp.legend.includes(t), `speedup legend: ${t}`);
  }
  assert.ok(
    sp.legend.some(t => t.startsWith('Baseline')),
    'baseline line legend',
  );
  assert.deepEqual(
    sp.decor.refLines.map(l => l.value),
    [1],
  );
  const baseMedian = r.variants.find(v => v.id === r.baseline).medianMs;
  r.variants.forEach((v, i) => {
    const expLow = v.status === 'ok' && v.q3Ms ? baseMedian / v.q3Ms : null;
    const expHigh = v.status === 'ok' && v.q1Ms ? baseMedian / v.q1Ms : null;
    assert.ok(
      expLow === null ? sp.decor.whiskers.low[i] === null : Math.abs(sp.decor.whiskers.low[i] - expLow) < 1e-12,
      `${v.id}: whisker low`,
    );
    assert.ok(
      expHigh === null ? sp.decor.whiskers.high[i] === null : Math.abs(sp.decor.whiskers.high[i] - expHigh) < 1e-12,
      `${v.id}: whisker high`,
    );
    // Within-noise bars are hatched and identical-code bars faded (patterns), the others solid colours.
    if (v.status === 'ok') assert.equal(sp.patterns[0][i], v.withinNoise === true || !!v.identicalTo, `${v.id}: noise marking`);
  });
  return charts;
}

// ------------------------------------------------------------------------------------------ tests

before(launchBrowser);
after(closeBrowser);

describe('standalone report', () => {
  for (const name of fixtureNames) {
    browserTest(`${name}: renders every chart and the whole table under its CSP`, async () => {
      const { page, log } = await openReport(name);
      const r = fixtures[name];
      await checkCharts(page, r);
      await checkTable(page, r);
      // Host-only controls are hidden; everything else is there.
      const hostOnlyShown = await page.evaluate(() => [...document.querySelectorAll('.ul-host-only')].map(e => e.offsetParent !== null));
      assert.deepEqual(hostOnlyShown, [false, false, false, false, false], 'Apply, Apply best, Export ×2 and Cancel hidden');
      assert.equal(
        await page.locator('h1').textContent(),
        `${r.kernel} · loop${r.loops.length > 1 ? 's' : ''} ${r.loops.map(l => `L${l.line}`).join(', ')}`,
      );
      assert.equal(await page.locator('[data-meta="GPU"] dd').textContent(), r.gpu ?? 'static: no GPU run');
      if (r.static) assert.match(await page.locator('[data-static-note]').textContent(), /GPU run adds kernel timings.*unroll-lens sweep/s);
      await assertClean(page, log);
    });
  }

  test('the report is self-contained: one file, no URL loaded, data escaped', async () => {
    // Paths relative to the folder the report is written from (issue 43): the fixture's source is in its markup-named folder.
    const html = reportHtml(fixtures['escaping-matmul_basic'], assets, { baseDir: '/workspace/unroll-lens' });
    assert.doesNotMatch(html, /<script\b[^>]*\ssrc=|<link\b|<img\b|<iframe\b/i, 'no external resource');
    const data = /<script type="application\/json" id="sweep-data">(.*?)<\/script>/s.exec(html)[1];
    assert.ok(!data.includes('<'), 'no < inside the embedded JSON');
    assert.deepEqual(JSON.parse(data), { ...fixtures['escaping-matmul_basic'], file: '<b>bold</b>/matmul_unroll.cu' });
    assert.ok(!html.includes('/workspace/unroll-lens'), 'no absolute path in a shared report');
    assert.match(
      html,
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; img-src data:; style-src &#39;nonce-/,
    );
  });
});

describe('webview host', () => {
  for (const name of fixtureNames) {
    browserTest(`${name}: ready → result renders every chart and the whole table`, async () => {
      const { page, log } = await openHost({ theme: 'dark' });
      const r = fixtures[name];
      assert.deepEqual(await page.evaluate(() => window.__posted), [{ type: 'ready' }]);
      await postResult(page, r);
      await checkCharts(page, r);
      await checkTable(page, r);
      const state = await page.evaluate(() => window.__getState());
      assert.deepEqual(state.result, r, 'the last result is persisted with setState');
      await assertClean(page, log);
    });
  }

  browserTest('markup in kernel names, paths, labels, notes and messages stays text', async () => {
    const r = fixtures['escaping-matmul_basic'];
    for (const open of [
      // the report names the file relative to where it was written from (issue 43), the panel by its absolute path
      () => openReport('escaping-matmul_basic', { baseDir: '/workspace/unroll-lens' }),
      async () => {
        const p = await openHost();
        await postResult(p.page, r);
        return p;
      },
    ]) {
      const { page, log } = await open();
      const dom = await page.evaluate(() => ({
        injected: document.querySelectorAll('#app script, #app img, #app iframe, #app b, #app i').length,
        scripts: document.querySelectorAll('script').length,
        h1: document.querySelector('h1').textContent,
        subtitle: document.querySelector('.ul-subtitle').textContent,
        notes: [...document.querySelectorAll('.ul-notes li')].map(li => li.textContent),
        failed: document.querySelector('.ul-failed').textContent,
        message: document.querySelector('tr[data-variant="51=8"] td[data-col="message"]').textContent,
        label: document.querySelector('tr[data-variant="51=2"] .ul-label').textContent,
        title: document.title,
      }));
      assert.equal(dom.injected, 0, 'no element created from data');
      assert.equal(dom.scripts, 2, "only the page's own scripts");
      assert.ok(dom.h1.startsWith('<script>alert(1)</script>k'), dom.h1);
      assert.ok(
        dom.subtitle.startsWith(page.url().startsWith('file:') ? '<b>bold</b>/' : '/workspace/unroll-lens/<b>bold</b>/'),
        dom.subtitle,
      );
      assert.ok(dom.notes.includes('<img src=x onerror="alert(3)"> a note with markup & an ampersand'));
      assert.equal(dom.message, r.variants.find(v => v.id === '51=8').message);
      assert.equal(dom.label, '<i>×2</i>');
      assert.match(dom.failed, /×8 \(compile\)/, 'failed variant listed as not charted');
      await page.waitForTimeout(200);
      await assertClean(page, log);
      if (page.url().startsWith('file:')) assert.ok(dom.title.includes('<script>alert(1)</script>k'), 'title is text');
    }
  });

  browserTest('a GPU result ends its notes with what the run cost; a static one does not', async () => {
    const timing = { wallS: 42.25, compileS: 61.5, checkS: 3.2, profileS: 30, gpuIdleS: 4.5, gpuRuns: 9, gpus: [0, 1] };
    const notesOf = async r => {
      const { page, log } = await openHost();
      await postResult(page, r);
      const notes = await page.evaluate(() => [...document.querySelectorAll('.ul-notes li')].map(li => li.textContent));
      await assertClean(page, log);
      return notes;
    };
    const gpu = await notesOf({ ...fixtures.matmul_basic, timing });
    assert.equal(
      gpu.at(-1),
      'run: 42.3 s wall · compile 1 min 2 s · check 3.2 s · profile 30.0 s · GPU idle 4.5 s · 9 GPU runs · GPUs 0,1',
    );
    assert.deepEqual(gpu.slice(0, -1), fixtures.matmul_basic.notes);
    const stat = await notesOf({ ...fixtures['static-matmul_basic'], timing });
    assert.ok(!stat.some(n => n.startsWith('run:')), 'a static result ran nothing on a GPU');
  });

  browserTest('the CSP is enforced (a script without the nonce is refused and reported)', async () => {
    const { page } = await openHost();
    await postResult(page, fixtures.matmul_basic);
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = true';
      document.body.append(s);
    });
    await page.waitForFunction(() => window.__violations.length > 0);
    assert.equal(await page.evaluate(() => window.__injected ?? false), false);
    assert.match((await page.evaluate(() => window.__violations))[0], /^script-src/);
  });

  browserTest('selecting: row click and chart click post reveal; Apply, Apply best and Export post their messages', async () => {
    const { page, log } = await openHost();
    const r = fixtures.icache_cliff;
    await postResult(page, r);
    await page.click('tr[data-variant="72=16"]');
    await settle(page);
    const sel = await readTable(page);
    assert.equal(sel.rows.find(x => x.id === '72=16').selected, 'true');
    const charts = await readCharts(page);
    const i = r.variants.findIndex(v => v.id === '72=16');
    assert.equal(charts.speedup.borderWidths[i], 3, 'selected bar outlined');
    assert.equal(await page.locator('.ul-selection .ul-button').textContent(), 'Apply ×16');
    await page.click('.ul-selection .ul-button');
    await page.click('text=Apply best (×16)');
    await page.click('text=Export CSV');
    await page.click('text=Export JSON (T4)');
    // A click on the ×4 bar of the speedup chart.
    const pos = await page.evaluate(
      idx => {
        const c = window.__unrollLensCharts.speedup;
        c.canvas.scrollIntoView({ block: 'center' }); // earlier clicks scrolled: the bar must be in the viewport
        const el = c.getDatasetMeta(0).data[idx];
        const box = c.canvas.getBoundingClientRect();
        return { x: box.left + el.x, y: box.top + (el.y + el.base) / 2 };
      },
      r.variants.findIndex(v => v.id === '72=4'),
    );
    await page.mouse.click(pos.x, pos.y);
    // chart.js handles events on the next animation frame, reading the canvas position then: wait
    // for it before anything scrolls.
    await page.waitForFunction(() => window.__posted.some(m => m.type === 'reveal' && m.variantId === '72=4'));
    // Keyboard: the selected row is the tab stop; ArrowDown moves, Enter selects.
    await page.focus('tr[data-variant="72=4"]');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    assert.deepEqual((await page.evaluate(() => window.__posted)).slice(1), [
      { type: 'reveal', variantId: '72=16' },
      { type: 'apply', variantId: '72=16' },
      { type: 'apply', variantId: '72=16' },
      { type: 'export', format: 'csv' },
      { type: 'export', format: 't4' },
      { type: 'reveal', variantId: '72=4' },
      { type: 'reveal', variantId: '72=8' },
    ]);
    assert.equal((await page.evaluate(() => window.__getState())).selected, '72=8');
    // The host selects (e.g. from a CodeLens): the row follows, nothing is posted back.
    const posted = (await page.evaluate(() => window.__posted)).length;
    await page.evaluate(() => window.postMessage({ type: 'select', variantId: '72=2' }, '*'));
    await settle(page);
    assert.equal((await readTable(page)).rows.find(x => x.id === '72=2').selected, 'true');
    assert.equal((await page.evaluate(() => window.__posted)).length, posted);
    // Junk from the host is ignored.
    await page.evaluate(() => window.postMessage({ type: 'result', result: { schema: 2 } }, '*'));
    await settle(page);
    assert.equal((await readTable(page)).rows.length, r.variants.length);
    // Impossible numbers (issue 23): a forged median, an unroll factor of -4, NaN registers: the whole result is dropped.
    const cells = JSON.stringify(await readTable(page));
    for (const forge of [
      v => ({ ...v, medianMs: -7 }),
      v => ({ ...v, factors: { 72: -4 } }),
      v => ({ ...v, registers: Number.NaN }),
      v => ({ ...v, occupancy: 1.5 }),
    ]) {
      const forged = { ...r, variants: r.variants.map((v, i) => (i === 1 ? forge(v) : v)) };
      await page.evaluate(m => window.postMessage(m, '*'), { type: 'result', result: forged });
      await settle(page);
      assert.equal(JSON.stringify(await readTable(page)), cells, 'the panel still shows the last possible result');
    }
    await assertClean(page, log);
  });

  browserTest(
    'Apply best only beyond noise (issue 25): disabled, with the reason, while the best is within noise of the file as written',
    async () => {
      const { page, log } = await openHost();
      const base = fixtures.icache_cliff;
      const confidence = (distinguishable, reason) => ({
        method: 'bootstrap',
        resamples: 2000,
        seed: 25,
        level: 0.95,
        best: base.best,
        ratio: 1.01,
        ratioLow: 0.98,
        ratioHigh: 1.04,
        minGain: 0.03,
        distinguishable,
        reason,
        contenders: [base.best, '72=8'],
        pFirst: 0.62,
        runnerUp: '72=8',
        leadRatio: 1.04,
        leadLow: 0.99,
        leadHigh: 1.09,
      });
      const noise = 'the code as written is as fast, within noise: ×16 is 1.01× the file as written (95% CI 0.98–1.04)';
      await postResult(page, { ...base, confidence: confidence(false, noise) });
      const applyBest = page.locator('.ul-actions .ul-primary');
      assert.equal(await applyBest.textContent(), 'Apply best (×16)');
      assert.equal(await applyBest.isDisabled(), true);
      assert.equal(await applyBest.getAttribute('title'), noise);
      assert.equal(
        await page.locator('[data-meta="Confidence"] dd').textContent(),
        `no change offered: ${noise} · ×16 is first in 62.0% of 2000 bootstrap resamples of ×16, ×8; runner-up ×8: median 1.04× ×16's (95% CI 0.99–1.09)`,
      );
      // a selected variant can still be applied on purpose
      await page.click('tr[data-variant="72=16"]');
      assert.equal(await page.locator('.ul-selection .ul-button').isDisabled(), false);
      const clear = '×16 is faster than the file as written by 2.31× (95% CI 2.30–2.32)';
      await postResult(page, { ...base, confidence: confidence(true, clear) });
      assert.equal(await applyBest.isDisabled(), false);
      assert.equal(await applyBest.getAttribute('title'), clear);
      // a result saved before the confidence: offered as before, no Confidence line
      await postResult(page, base);
      assert.equal(await applyBest.isDisabled(), false);
      assert.equal(await page.locator('[data-meta="Confidence"]').count(), 0);
      await assertClean(page, log);
    },
  );

  browserTest('i-cache column: measured and predicted badges, the prediction beside a measurement, and the legend', async () => {
    const { page, log } = await openHost({ theme: 'dark' });
    const measured = fixtures['icache_cliff'];
    // The same loop before its GPU run: the engine's bench stage on the recorded SASS facts with no measurement.
    const { icacheEntries } = require(path.join(ROOT, 'out/src/engine/icache/entries.js'));
    const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'recorded', 'icache_cliff.icache.json'), 'utf8')).variants;
    const unmeasured = facts.map(f => ({ label: f.label, status: 'ok', medianMs: null, stallShare: null, achievedOccupancy: null }));
    const predicted = icacheEntries(unmeasured, facts, 'sm_90');
    // Half-way through a run: the first variants measured, the rest still pending with their prediction.
    const half = Math.ceil(measured.variants.length / 2);
    const live = {
      ...measured,
      complete: false,
      variants: measured.variants.map((v, i) =>
        i < half
          ? v
          : {
              ...v,
              status: 'pending',
              samples: 0,
              medianMs: null,
              q1Ms: null,
              q3Ms: null,
              iqrMs: null,
              cv: null,
              speedup: null,
              withinNoise: null,
              stallShare: null,
              achievedOccupancy: null,
              identicalTo: null,
              icache: predicted[i],
            },
      ),
    };
    await postResult(page, live, { message: 'timing', done: half, total: measured.variants.length });
    const cells = await page.evaluate(() =>
      [...document.querySelectorAll('.ul-table tbody tr')].map(tr => {
        const td = tr.querySelector('td[data-col="icache"]');
        const badge = td.querySelector('.ul-badge');
        const style = badge ? getComputedStyle(badge) : null;
        return {
          id: tr.getAttribute('data-variant'),
          shown: td.getAttribute('data-icache'),
          badge: badge?.textContent ?? null,
          border: style?.borderTopStyle ?? null,
          colour: style?.color ?? null,
          tip: td.title,
          text: td.textContent,
        };
      }),
    );
    assert.deepEqual(
      cells.map(c => [c.id, c.shown, c.badge]),
      live.variants.map((v, i) => [v.id, i < half ? 'measured' : 'predicted', i < half ? 'measured' : 'predicted']),
    );
    for (const [i, c] of cells.entries()) {
      const v = live.variants[i];
      assert.equal(c.text, icacheCell(v.icache), v.id);
      // measured: solid badge and the prediction beside it; predicted: a dashed badge and a range
      if (i < half) {
        assert.equal(c.border, 'solid');
        assert.match(c.text, /^\d+\.\d\d× measured/);
        assert.match(c.tip, /achieved, ncu/);
        assert.match(c.tip, /no_instruction \d+\.\d% of stalls/);
      } else {
        assert.equal(c.border, 'dashed');
        assert.match(c.text, /^\d+\.\d\d(–\d+\.\d\d)?× predicted$/);
        assert.match(c.tip, /theoretical/);
      }
    }
    assert.notEqual(cells[0].colour, cells[half].colour, 'the two badges differ in colour');
    const charts = await checkCharts(page, live);
    assert.deepEqual(
      charts.icache.patterns[0],
      live.variants.map((_, i) => i >= half),
      'chart: solid measured bars, hatched predicted ones',
    );
    // The file as written (2048 copies of the body) overflows the cache: its measurement and prediction both above 1.
    const asWritten = measured.variants.find(v => v.id === 'as-written').icache;
    assert.ok(asWritten.measured.slowdown > 1 && asWritten.predicted.low > 1);
    const legend = await page.evaluate(() => {
      const p = document.querySelector('.ul-icache-legend');
      return {
        shown: !p.hidden && p.offsetParent !== null,
        text: p.textContent,
        badges: [...p.querySelectorAll('.ul-badge')].map(b => b.textContent),
      };
    });
    assert.equal(legend.shown, true);
    // icache_cliff ×1 is slower but fits the cache with few no_instruction stalls: not an i-cache slowdown.
    assert.deepEqual(legend.badges, ['measured', 'predicted', 'not i-cache']);
    assert.match(legend.text, new RegExp(`median ÷ ${asWritten.reference}'s`));
    assert.match(
      await page.locator('th[data-col="icache"] button').getAttribute('title'),
      /measured on the GPU when the variant ran, else predicted from its SASS/,
    );
    // A result without i-cache entries (saved before issue 13): no column, no legend.
    const old = { ...measured, createdAt: '2026-01-01T00:00:00.000Z', variants: measured.variants.map(({ icache: _, ...v }) => v) };
    await postResult(page, old);
    assert.equal(await page.locator('th[data-col="icache"]').count(), 0);
    assert.equal(await page.locator('.ul-icache-legend').isHidden(), true);
    await assertClean(page, log);
  });

  browserTest('sorting: numeric, missing values last both ways, keyboard accessible', async () => {
    const { page, log } = await openHost();
    const r = fixtures['escaping-matmul_basic'];
    await postResult(page, r);
    const order = async () => (await readTable(page)).rows.map(x => x.id);
    const medians = ids => ids.map(id => r.variants.find(v => v.id === id).medianMs);
    await page.click('th[data-col="medianMs"] button');
    let ids = await order();
    let m = medians(ids);
    assert.equal(m.at(-1), null, 'failed variant (no median) last');
    assert.deepEqual(
      m.slice(0, -1),
      [...m.slice(0, -1)].sort((a, b) => a - b),
      'ascending',
    );
    assert.equal(await page.getAttribute('th[data-col="medianMs"]', 'aria-sort'), 'ascending');
    await page.focus('th[data-col="medianMs"] button');
    await page.keyboard.press('Enter');
    ids = await order();
    m = medians(ids);
    assert.equal(m.at(-1), null, 'still last when descending');
    assert.deepEqual(
      m.slice(0, -1),
      [...m.slice(0, -1)].sort((a, b) => b - a),
      'descending',
    );
    assert.equal(await page.getAttribute('th[data-col="medianMs"]', 'aria-sort'), 'descending');
    // Numbers in text sort as numbers (×2 before ×16); kernel instr numerically (56 < 144 < 216).
    await page.click('th[data-col="factor:51"] button');
    ids = await order();
    assert.ok(ids.indexOf('51=2') < ids.indexOf('51=16'), ids.join());
    await page.click('th[data-col="kernelInstructions"] button');
    const instr = (await order()).map(id => r.variants.find(v => v.id === id).kernelInstructions);
    assert.deepEqual(instr, [...instr.filter(x => x !== null).sort((a, b) => a - b), null]);
    assert.deepEqual((await page.evaluate(() => window.__getState())).sort, { column: 'kernelInstructions', direction: 'asc' });
    await assertClean(page, log);
  });

  browserTest('live update: pending variants fill in place, progress and Cancel, then complete; state restores', async () => {
    const { page, log } = await openHost();
    const final = fixtures.matmul_basic;
    const pending = v => ({
      ...v,
      status: 'pending',
      kernelInstructions: null,
      kernelBytes: null,
      loopInstructions: {},
      effectiveUnroll: {},
      fullyUnrolled: {},
      registers: null,
      spillStores: null,
      spillLoads: null,
      occupancy: null,
      identicalTo: null,
      samples: 0,
      medianMs: null,
      q1Ms: null,
      q3Ms: null,
      iqrMs: null,
      cv: null,
      speedup: null,
      withinNoise: null,
      stallShare: null,
      achievedOccupancy: null,
    });
    const partial = done => ({
      ...final,
      complete: false,
      evaluations: done,
      best: null,
      bestBasis: null,
      variants: final.variants.map((v, i) => (i < done ? v : pending(v))),
    });
    await postResult(page, partial(1), { message: 'building variants', done: 0, total: final.variants.length });
    const first = await page.evaluate(() => {
      window.__chartsBefore = window.__unrollLensCharts;
      window.__canvasBefore = [...document.querySelectorAll('canvas')];
      return document.querySelector('.ul-progress-text').textContent;
    });
    assert.equal(first, `building variants (0 of ${final.variants.length})`);
    // a search strategy's total is an upper bound until it ends (issue 27)
    await postResult(page, partial(1), { message: '[1/≤38] building (6 variants)', done: 1, total: 38, atMost: true });
    assert.equal(
      await page.evaluate(() => document.querySelector('.ul-progress-text').textContent),
      '[1/≤38] building (6 variants) (1 of at most 38)',
    );
    assert.ok(await page.isVisible('.ul-cancel'));
    let table = await readTable(page);
    assert.deepEqual(
      table.rows.map(x => x.cells.status),
      final.variants.map((_, i) => (i < 1 ? 'ok' : 'pending')),
    );
    await page.click('.ul-cancel');
    assert.deepEqual((await page.evaluate(() => window.__posted)).at(-1), { type: 'cancel' });

    for (let done = 2; done < final.variants.length; done++) {
      await postResult(page, partial(done), { message: `profiling ${final.variants[done].label}`, done, total: final.variants.length });
    }
    table = await readTable(page);
    assert.equal(table.rows.filter(x => x.cells.status === 'pending').length, 1);
    const charts = await readCharts(page);
    assert.equal(charts.speedup.datasets[0].n, final.variants.length - 1, 'a bar per finished variant, none for the pending one');
    await postResult(page, final, null);
    const same = await page.evaluate(() => {
      const now = window.__unrollLensCharts;
      const canvases = [...document.querySelectorAll('canvas')];
      return Object.keys(now).every(k => now[k] === window.__chartsBefore[k]) && canvases.every((c, i) => c === window.__canvasBefore[i]);
    });
    assert.ok(same, 'charts updated in place (same Chart instances and canvases)');
    assert.equal(await page.isVisible('.ul-progress'), false);
    await checkCharts(page, final);
    await checkTable(page, final);
    await page.click('tr[data-variant="51=16"]');
    const state = await page.evaluate(() => window.__getState());
    assert.equal(state.result.complete, true);
    await assertClean(page, log);

    // A window reload: the serializer hands the state back; the page renders it before any message.
    const restored = await openHost({ state });
    await settle(restored.page);
    await checkTable(restored.page, final);
    assert.equal((await readTable(restored.page)).rows.find(x => x.id === '51=16').selected, 'true');
    await assertClean(restored.page, restored.log);
  });

  browserTest('theme: colours follow the body class and VS Code variables (dark → light → high contrast)', async () => {
    const { page, log } = await openHost({ theme: 'dark' });
    await postResult(page, fixtures.icache_cliff);
    const colours = async () => {
      const c = await readCharts(page);
      return { tick: c.speedup.tickColor, noInstruction: c.stalls.colors[0], border: c.stalls.borderColors };
    };
    assert.deepEqual((await colours()).tick, '#cccccc');
    assert.equal((await colours()).noInstruction, '#f14c4c');
    await page.evaluate(t => window.__setTheme(t.cls, t.vars), THEMES.light);
    await settle(page);
    assert.equal((await colours()).tick, '#3b3b3b');
    assert.equal((await colours()).noInstruction, '#e51400');
    await page.evaluate(t => window.__setTheme(t.cls, t.vars), THEMES.hc);
    await settle(page);
    const hc = await colours();
    assert.equal(hc.tick, '#ffffff');
    assert.ok(
      hc.border.every(b => b === '#6fc3df'),
      'bars outlined with the contrast border',
    );
    await assertClean(page, log);
  });

  browserTest('screenshots: dark, light, static and standalone GPU report', async () => {
    const shots = [];
    const shoot = async (page, file) => {
      await settle(page);
      const out = path.join(ARTIFACTS, file);
      await page.screenshot({ path: out, fullPage: true });
      shots.push(out);
    };
    for (const theme of ['dark', 'light']) {
      const { page } = await openHost({ theme });
      // The real sweep of the i-cache sample on an H100 (scripts/device/run-sweep.sh).
      await postResult(page, fixtures['gpu-h100-icache_cliff']);
      await page.click('tr[data-variant="72=16"]');
      await shoot(page, `panel-${theme}.png`);
    }
    const two = await openHost({ theme: 'dark' });
    await postResult(two.page, fixtures['gpu-h100-matvec_exhaustive']);
    await shoot(two.page, 'panel-two-loops.png');
    const st = await openHost({ theme: 'dark' });
    await postResult(st.page, fixtures['static-matmul_basic']);
    await shoot(st.page, 'panel-static.png');
    const rep = await openReport('matmul_basic');
    await shoot(rep.page, 'report-gpu.png');
    // A bench on the H100 with the i-cache column: measured rows beside predicted ones.
    const ic = await openHost({ theme: 'dark' });
    await postResult(ic.page, fixtures['icache_cliff']);
    await shoot(ic.page, 'panel-icache.png');
    for (const s of shots) assert.ok(fs.statSync(s).size > 20_000, `${s} looks empty`);
    console.log(`screenshots: ${shots.map(s => path.relative(ROOT, s)).join(', ')}`);
  });
});

describe('two-loop sweep heatmap', () => {
  /** The H100 exhaustive sweep with one point failed and one left out of the result. */
  function withFailedAndMissing() {
    const r = structuredClone(fixtures['gpu-h100-matvec_exhaustive']);
    const failed = r.variants.find(v => v.id === '70=2,74=4');
    Object.assign(failed, { status: 'compile', message: 'ptxas fatal: <b>out of registers</b>', identicalTo: null });
    for (const k of [
      'kernelInstructions',
      'kernelBytes',
      'registers',
      'medianMs',
      'q1Ms',
      'q3Ms',
      'iqrMs',
      'cv',
      'speedup',
      'withinNoise',
      'stallShare',
      'achievedOccupancy',
    ])
      failed[k] = null;
    failed.samples = 0;
    r.variants = r.variants.filter(v => v.id !== '70=16,74=2' && v.identicalTo !== '70=16,74=2');
    return r;
  }

  browserTest('exhaustive: a 7 × 7 grid, failed and missing points empty with why, best outlined; click and keys select', async () => {
    const { page, log } = await openHost({ theme: 'light' });
    const r = withFailedAndMissing();
    await postResult(page, r);
    await checkCharts(page, r);
    await checkTable(page, r);
    const cell = (x, y) => page.locator(`td.ul-heat-cell[data-xi="${x}"][data-yi="${y}"]`);
    assert.equal(await page.locator('td.ul-heat-cell').count(), 49);
    // ×2 across (index 2), ×4 down (index 3): the failed point; ×16 across, ×2 down: the missing one.
    assert.equal(await cell(2, 3).getAttribute('title'), 'L70 ×2 · L74 ×4\ncompile: ptxas fatal: <b>out of registers</b>');
    assert.match(await cell(5, 2).getAttribute('title'), /^L70 ×16 · L74 ×2\nnot in the result$/);
    assert.equal(await page.locator('td.ul-heat-best').getAttribute('data-variant'), r.best);
    assert.match(await page.locator('td.ul-heat-best').getAttribute('title'), /best: fastest median kernel time/);
    // The file as written's factors (L70 default, L74 full): marked, within noise (1.000×).
    assert.match(await cell(0, 6).textContent(), /^1\.000×as written$/);
    await cell(4, 1).click();
    assert.deepEqual((await page.evaluate(() => window.__posted)).at(-1), { type: 'reveal', variantId: '70=8,74=1' });
    assert.equal(await cell(4, 1).getAttribute('aria-selected'), 'true');
    assert.equal((await readTable(page)).rows.find(x => x.id === '70=8,74=1').selected, 'true');
    await cell(4, 1).focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    const posted = (await page.evaluate(() => window.__posted)).length;
    await page.keyboard.press('Enter'); // the missing point: nothing to select
    assert.equal((await page.evaluate(() => window.__posted)).length, posted);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    assert.deepEqual((await page.evaluate(() => window.__posted)).at(-1), { type: 'reveal', variantId: '70=16,74=4' });
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('data-variant')), '70=16,74=4');
    await assertClean(page, log);
  });

  browserTest('coordinate search: the points it did not visit are empty cells that say so', async () => {
    const { page, log } = await openReport('gpu-h100-matvec_coordinate');
    const r = fixtures['gpu-h100-matvec_coordinate'];
    const points = r.variants.filter(v => Object.keys(v.factors).length === 2).length;
    const empty = await page.locator('td.ul-heat-empty').evaluateAll(tds => tds.map(td => td.title));
    assert.equal(empty.length, 49 - points);
    for (const t of empty) assert.match(t, /\nnot evaluated: the coordinate search did not visit this point$/);
    await assertClean(page, log);
  });

  browserTest('extra axis: one grid per value; one-loop sweeps and benchmarks keep the bars', async () => {
    const { page, log } = await openHost();
    const base = fixtures['gpu-h100-matvec_exhaustive'];
    const tag = (id, b) => (id === 'as-written' ? id : `${id}|BLOCK=${b}`);
    const r = {
      ...base,
      params: { BLOCK: ['8', '16'] },
      spaceSize: 98,
      best: tag(base.best, '16'),
      variants: [
        base.variants[0],
        ...['8', '16'].flatMap(b =>
          base.variants
            .slice(1)
            .map(v => ({ ...v, id: tag(v.id, b), params: { BLOCK: b }, identicalTo: v.identicalTo && tag(v.identicalTo, b) })),
        ),
      ],
    };
    await postResult(page, r);
    await checkCharts(page, r);
    assert.deepEqual(await page.locator('.ul-heat-params').allTextContents(), ['BLOCK=8', 'BLOCK=16']);
    for (const name of ['gpu-h100-icache_cliff', 'matmul_basic']) {
      await postResult(page, fixtures[name]);
      const charts = await checkCharts(page, fixtures[name]);
      assert.ok(charts.speedup, `${name}: speedup bars`);
      assert.equal(await page.locator('[data-chart="heatmap"]').count(), 0);
    }
    await assertClean(page, log);
  });
});

describe('measurement conditions', () => {
  browserTest('every chart states the measurement conditions the result records', async () => {
    const { page, log } = await openHost();
    const cupti = { tool: 'cupti', clocks: 'as-is', caches: 'warm' };
    const cases = [
      [
        { ...fixtures['gpu-h100-matvec_exhaustive'], measurement: cupti },
        'CUPTI timer (program run as itself) · clocks as-is (not locked) · caches warm (as the program runs)',
      ],
      [
        { ...fixtures.matmul_basic, clockControl: 'base', measurement: { tool: 'ncu', clocks: 'base', caches: 'flushed' } },
        'ncu · clocks locked to base · caches flushed before each launch',
      ],
      // Saved before the conditions were kept: ncu's flush, the clocks as recorded or not at all.
      [{ ...fixtures.matmul_basic, clockControl: 'none' }, 'ncu · clocks as-is (not locked) · caches flushed before each launch'],
      [fixtures.icache_cliff, 'ncu · clocks not recorded · caches flushed before each launch'],
    ];
    for (const [r, words] of cases) {
      await postResult(page, r);
      await checkCharts(page, r);
      const lines = await page.locator('figure[data-chart] .ul-conditions').allTextContents();
      assert.ok(lines.length >= 4);
      for (const l of lines) assert.equal(l, `NVIDIA H100 80GB HBM3 · ${words}`);
    }
    await postResult(page, fixtures['static-matmul_basic']);
    await checkCharts(page, fixtures['static-matmul_basic']);
    for (const l of await page.locator('figure[data-chart] .ul-conditions').allTextContents())
      assert.match(l, /^SASS only \(sm_90, no GPU run\)/);
    await assertClean(page, log);
  });
});

// "Compare kernels in this file" (issue 26): the H100 reduction ladder (test/fixtures/sweep/compare/),
// one row and one bar per kernel, speedups against the baseline kernel, nothing to apply.
describe('kernel comparison', () => {
  const r = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'compare', 'reduce_unroll.json'), 'utf8'));
  const rows = r.variants[0].instantiations;
  const labels = [
    'reduce_interleaved',
    'reduce_unroll2',
    'reduce_unroll4',
    'reduce_unroll8',
    'reduce_unroll8_warptail',
    'reduce_complete<256u>',
  ];
  const speedup = x => rows[0].medianMs / x.medianMs;

  browserTest('the ladder: a row and a bar per kernel, speedup vs the baseline kernel, no Apply, exports posted', async () => {
    const { page, log } = await openHost({ theme: 'dark' });
    await postResult(page, r);
    assert.equal(await page.locator('.ul-title').textContent(), 'reduce_unroll.cu · compare · 6 kernels');
    assert.match(await page.locator('[data-meta="Baseline"] dd').textContent(), /^reduce_interleaved /);
    assert.equal(await page.locator('[data-meta="Fastest"] dd').textContent(), `reduce_unroll8_warptail (${speedup(rows[4]).toFixed(3)}×)`);
    assert.equal(await page.locator('.ul-table-section h2').textContent(), 'Kernels');
    const { cols, rows: shown } = await readTable(page);
    assert.deepEqual(
      shown.map(x => x.id),
      rows.map(x => x.kernel),
      'one row per kernel, in the order named',
    );
    // spills come from ptxas -v of the file as written, per compared kernel
    for (const c of [
      'label',
      'medianMs',
      'iqrMs',
      'speedup',
      'kernelInstructions',
      'registers',
      'spillStores',
      'spillLoads',
      'topStall',
      'withinNoise',
    ])
      assert.ok(cols.includes(c), `column ${c}`);
    for (const c of ['occupancy', 'identicalTo', 'kernelBytes', 'instantiation', 'executedInstructions'])
      assert.ok(!cols.includes(c), `no column ${c}`);
    assert.ok(!cols.some(c => c.startsWith('factor:')), 'no factor columns');
    shown.forEach((row, i) => {
      const x = rows[i];
      assert.equal(row.cells.label, labels[i]);
      assert.equal(row.cells.medianMs, us(x.medianMs));
      assert.equal(row.cells.iqrMs, us(x.iqrMs));
      assert.equal(row.cells.speedup, `${speedup(x).toFixed(3)}×`);
      assert.equal(row.cells.kernelInstructions, int(x.kernelInstructions));
      assert.equal(row.cells.registers, int(x.registers));
    });
    const charts = await readCharts(page);
    assert.deepEqual(Object.keys(charts).sort(), ['resources', 'size', 'speedup', 'stalls']);
    assert.deepEqual(
      charts.speedup.labels.map(l => l[0]),
      labels,
    );
    assert.deepEqual(charts.speedup.decor.refLines, [{ value: 1, label: 'Baseline (reduce_interleaved) = 1×' }]);
    assert.ok(charts.speedup.marks.length === 6 && charts.speedup.marks.every(m => m.alpha > 0), 'every bar drawn');
    const heads = await page.locator('figure[data-chart] h2').allTextContents();
    assert.ok(heads.includes('Speedup vs the baseline kernel'), heads.join(' | '));
    await checkConditions(page, r, ['speedup', 'stalls', 'size', 'resources']);
    assert.match(await page.locator('figure[data-chart="speedup"] figcaption').textContent(), /Baseline: reduce_interleaved\.$/);
    // nothing to apply: different kernels, not factors of one
    assert.equal(await page.locator('text=Apply best').isVisible(), false);
    await page.click(`tr[data-variant="${rows[2].kernel}"]`);
    assert.equal(await page.locator('.ul-selection .ul-button').isVisible(), false);
    await page.click('text=Export CSV');
    assert.deepEqual((await page.evaluate(() => window.__posted)).slice(1), [
      { type: 'reveal', variantId: rows[2].kernel },
      { type: 'export', format: 'csv' },
    ]);
    assert.deepEqual((await page.evaluate(() => window.__getState())).result, r, 'the comparison as recorded is persisted');
    await assertClean(page, log);
  });

  browserTest('with ncu counters: executed instructions and achieved occupancy per kernel', async () => {
    // the ncu run of the same ladder (../gpu/h100/compare/reduce.ncu.json) put on these rows: its counters, this replay's times
    const ncu = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'gpu', 'h100', 'compare', 'reduce.ncu.json'), 'utf8'));
    const counted = structuredClone(r);
    counted.variants[0].instantiations.forEach((x, i) => {
      x.executedInstructions = ncu.kernels[i].executedInstructions;
      x.achievedOccupancy = ncu.kernels[i].achievedOccupancy;
    });
    const { page, log } = await openHost();
    await postResult(page, counted);
    const { rows: shown } = await readTable(page);
    shown.forEach((row, i) => {
      assert.equal(row.cells.executedInstructions, int(ncu.kernels[i].executedInstructions));
      assert.equal(row.cells.achievedOccupancy, pct100(ncu.kernels[i].achievedOccupancy));
    });
    // the executed-instructions chart, right after the speedup's, with the median time on its second axis
    const ids = ['speedup', 'executed', 'stalls', 'size', 'resources'];
    assert.deepEqual(await page.locator('figure[data-chart]').evaluateAll(fs => fs.map(f => f.dataset.chart)), ids, 'charts in order');
    assert.equal(await page.locator('figure[data-chart="executed"] h2').textContent(), 'Executed instructions per launch (ncu)');
    await checkConditions(page, counted, ids);
    const ex = (await readCharts(page)).executed;
    assert.deepEqual(
      ex.labels.map(l => l[0]),
      labels,
      'one bar per kernel, in the order named',
    );
    assert.deepEqual(
      ex.datasets[0].data,
      ncu.kernels.map(k => k.executedInstructions),
      'bars: executed instructions',
    );
    ex.datasets[1].data.forEach((v, i) => assert.ok(Math.abs(v - rows[i].medianMs * 1000) < 1e-9, `line: ${labels[i]} median µs`));
    assert.deepEqual(ex.legend, ['Executed warp instructions / launch', 'Median time (µs, right axis)']);
    assert.deepEqual(ex.titles, { x: 'Kernel', y: 'Executed warp instructions', yt: 'Median time (µs)' });
    assert.ok(ex.marks.length === 12 && ex.marks.every(m => m.alpha > 0), 'every bar and point drawn');
    // the fall the chart is for: instructions ÷12 from the baseline to the last rung, time ÷3.5
    const [first, last] = [ncu.kernels[0].executedInstructions, ncu.kernels[5].executedInstructions];
    const caption = await page.locator('figure[data-chart="executed"] figcaption').textContent();
    assert.ok(
      caption.endsWith(
        `reduce_interleaved → reduce_complete<256u> (fewest executed): instructions ÷${(first / last).toFixed(2)}, ` +
          `median time ÷${(rows[0].medianMs / rows[5].medianMs).toFixed(2)}.`,
      ),
      caption,
    );
    assert.equal((first / last).toFixed(0), '12');
    // achieved occupancy: counted by ncu in the extra counter run beside the CUPTI timer's
    const resources = (await readCharts(page)).resources;
    assert.ok(resources.legend.includes('Achieved occupancy (%, ncu)'), resources.legend.join(', '));
    assert.match(
      await page.locator('figure[data-chart="resources"] figcaption').textContent(),
      /^Registers per thread of each kernel; achieved occupancy counted by ncu in an extra run beside the CUPTI timer's \(--counters on/,
    );
    // without the counters (the CUPTI timer's replay), no such chart, and no achieved occupancy drawn
    await postResult(page, r);
    assert.equal(await page.locator('figure[data-chart="executed"]').count(), 0, 'no executed chart without counters');
    const uncounted = await readCharts(page);
    assert.ok(!('executed' in uncounted));
    assert.deepEqual(uncounted.resources.legend, ['Registers / thread', 'Spill bytes (stores + loads)', 'Theoretical occupancy (%)']);
    assert.match(
      await page.locator('figure[data-chart="resources"] figcaption').textContent(),
      /; no achieved occupancy: the CUPTI timer counts it only with --counters on/,
    );
    await assertClean(page, log);
  });
});

describe('executed instructions', () => {
  browserTest('a benchmark with counters: executed-instruction bars per variant, identical code takes its copy', async () => {
    // made-up counts on a recorded benchmark (none of the sweep fixtures was counted by ncu)
    const bench = structuredClone(fixtures.matmul_basic);
    bench.variants.forEach((v, i) => {
      if (!v.identicalTo) v.executedInstructions = (i + 1) * 1_000_000;
    });
    const { page, log } = await openHost();
    await postResult(page, bench);
    const charts = await checkCharts(page, bench);
    const expected = bench.variants.map(v =>
      v.status !== 'ok' ? null : (v.executedInstructions ?? bench.variants.find(x => x.id === v.identicalTo).executedInstructions),
    );
    assert.deepEqual(charts.executed.datasets[0].data, expected, 'bars: own counts, else the identical variant’s');
    assert.ok(charts.executed.legend.includes('Identical code (= ×N), measured once'));
    assert.equal(await page.locator('figure[data-chart="executed"] h2').textContent(), 'Executed instructions per launch (ncu)');
    await postResult(page, fixtures.matmul_basic);
    await checkCharts(page, fixtures.matmul_basic);
    await assertClean(page, log);
  });
});

// A distinct nonce per page, so one page's nonce cannot be replayed into another.
test('panelHtml: CSP, nonce and escaping of what the host passes in', () => {
  const nonce = crypto.randomBytes(16).toString('base64');
  const html = panelHtml({
    scriptUri: 'https://x.invalid/a.js?x="<>',
    styleUri: 'https://x.invalid/a.css',
    cspSource: 'https://x.invalid',
    nonce,
    title: '<b>t</b>',
  });
  assert.ok(
    html.includes(
      `default-src &#39;none&#39;; img-src https://x.invalid data:; style-src https://x.invalid &#39;nonce-${nonce}&#39;; ` +
        `script-src &#39;nonce-${nonce}&#39;; font-src https://x.invalid">`,
    ),
  );
  assert.ok(html.includes('<title>&lt;b&gt;t&lt;/b&gt;</title>'));
  assert.ok(html.includes('src="https://x.invalid/a.js?x=&quot;&lt;&gt;"'));
  assert.throws(
    () => panelHtml({ scriptUri: '', styleUri: '', cspSource: "x; script-src 'unsafe-inline'", nonce, title: '' }),
    /cspSource/,
  );
  assert.throws(() => panelHtml({ scriptUri: '', styleUri: '', cspSource: "'unsafe-inline'", nonce, title: '' }), /cspSource/);
  // code-server's webview.cspSource: 'self' is the one quoted keyword a host may pass.
  assert.match(
    panelHtml({ scriptUri: 'a', styleUri: 'b', cspSource: "'self' https://*.vscode-cdn.net", nonce, title: '' }),
    /style-src &#39;self&#39; https:\/\/\*\.vscode-cdn\.net &#39;nonce-/,
  );
  assert.throws(() => panelHtml({ scriptUri: '', styleUri: '', cspSource: 'x', nonce: 'short', title: '' }), /nonce/);
  assert.notEqual(makeNonce(), makeNonce());
});
