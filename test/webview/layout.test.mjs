// Issue 43: the report and the panel stay readable with many variants. In real headless Chromium,
// on the standalone report (the page `--report` writes; the panel renders the same page):
//   - no two x-axis labels of any chart overlap (their drawn boxes, measured from where chart.js
//     puts each label and what the canvas measures its text to be), and none leaves its canvas;
//   - the table fits the window or scrolls inside it: the page never scrolls sideways, the
//     table's scroll box (and so its horizontal scrollbar) is inside the window, and scrolled to
//     registers, spills, occupancy or "Identical to" those cells are visible with the variant
//     column still on the left, on top;
//   - a chart whose values are all equal or all unknown is a sentence, not a drawing.
// Screenshots go to .test-artifacts/webview/ (layout-*.png).
//
//   npm run build && node --test test/webview/layout.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  ARTIFACTS,
  FIXTURES,
  NO_BROWSER,
  ROOT,
  closeBrowser,
  fixtures,
  launchBrowser,
  openHost,
  openReport,
  postResult,
  settle,
} from './host.mjs';

const browserTest = (name, fn) => test(name, { skip: NO_BROWSER }, fn);

/** The largest results we have: a real static sweep of 37 variants (nvcc 13.0) and the H100's 50-variant one. */
const MANY = ['static-matvec_warp_per_row', 'gpu-h100-matvec_exhaustive'];
/** A comparison's table: registers and spills from ptxas, achieved occupancy and the top stall at its far right. */
const COMPARE_COLS = ['registers', 'spillStores', 'achievedOccupancy', 'topStall'];
const COMPARE = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'compare', 'reduce_unroll.json'), 'utf8'));

/**
 * Per drawn chart: each shown x label's four corners in page pixels, from chart.js's label items
 * (translation, rotation, alignment, line offsets) and the canvas's own text metrics of each line.
 */
async function labelBoxes(page) {
  return page.evaluate(() => {
    const out = {};
    for (const [id, chart] of Object.entries(window.__unrollLensCharts)) {
      if (chart.canvas.closest('[data-flat]')) continue;
      const rect = chart.canvas.getBoundingClientRect();
      const ctx = chart.canvas.getContext('2d');
      const boxes = [];
      for (const item of chart.scales.x.getLabelItems()) {
        const o = item.options;
        ctx.save();
        ctx.font = item.font.string;
        ctx.textAlign = o.textAlign;
        ctx.textBaseline = o.textBaseline;
        const lines = Array.isArray(item.label) ? item.label : [item.label];
        let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
        lines.forEach((line, j) => {
          const m = ctx.measureText(String(line));
          const y = item.textOffset + j * item.font.lineHeight;
          x0 = Math.min(x0, -m.actualBoundingBoxLeft);
          x1 = Math.max(x1, m.actualBoundingBoxRight);
          y0 = Math.min(y0, y - m.actualBoundingBoxAscent);
          y1 = Math.max(y1, y + m.actualBoundingBoxDescent);
        });
        ctx.restore();
        const [tx, ty] = o.translation;
        const c = Math.cos(o.rotation);
        const s = Math.sin(o.rotation);
        const corners = [
          [x0, y0],
          [x1, y0],
          [x1, y1],
          [x0, y1],
        ].map(([x, y]) => [rect.left + tx + x * c - y * s, rect.top + ty + x * s + y * c]);
        boxes.push({ label: lines.join(' '), corners });
      }
      out[id] = { boxes, canvas: { left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom } };
    }
    return out;
  });
}

/** Overlap depth of two convex quadrilaterals (separating axis theorem): ≤ 0 when they do not overlap. */
function overlap(a, b) {
  let depth = Infinity;
  for (const poly of [a, b]) {
    for (let i = 0; i < 4; i++) {
      const [x1, y1] = poly[i];
      const [x2, y2] = poly[(i + 1) % 4];
      const len = Math.hypot(x2 - x1, y2 - y1) || 1;
      const n = [(y1 - y2) / len, (x2 - x1) / len];
      const proj = q => q.map(([x, y]) => x * n[0] + y * n[1]);
      const pa = proj(a);
      const pb = proj(b);
      depth = Math.min(depth, Math.min(Math.max(...pa), Math.max(...pb)) - Math.max(Math.min(...pa), Math.min(...pb)));
    }
  }
  return depth;
}

/** No two labels overlap by more than half a pixel; every label lies inside its canvas. Returns labels shown per chart. */
async function checkLabels(page, what) {
  const charts = await labelBoxes(page);
  assert.ok(Object.keys(charts).length > 0, `${what}: no chart drawn`);
  const shown = {};
  for (const [id, { boxes, canvas }] of Object.entries(charts)) {
    shown[id] = boxes.length;
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const d = overlap(boxes[i].corners, boxes[j].corners);
        assert.ok(d <= 0.5, `${what}: ${id}: labels "${boxes[i].label}" and "${boxes[j].label}" overlap by ${d.toFixed(1)} px`);
      }
      for (const [x, y] of boxes[i].corners)
        assert.ok(
          x >= canvas.left - 1 && x <= canvas.right + 1 && y >= canvas.top - 1 && y <= canvas.bottom + 1,
          `${what}: ${id}: label "${boxes[i].label}" leaves its canvas`,
        );
    }
  }
  return shown;
}

/**
 * The table: the page does not scroll sideways, the scroll box lies inside the window, and scrolled
 * to each of `cols` its header cell is visible right of the sticky variant column, which stays at
 * the box's left edge on top of the cells scrolled under it.
 */
async function checkTable(page, what, cols) {
  await page.locator('.ul-table-scroll').scrollIntoViewIfNeeded();
  const t = await page.evaluate(cols => {
    const box = document.querySelector('.ul-table-scroll');
    const b = box.getBoundingClientRect();
    const out = {
      pageScrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      innerHeight: window.innerHeight,
      box: { left: b.left, right: b.right, top: b.top, bottom: b.bottom },
      scrolls: box.scrollWidth > box.clientWidth,
      cols: {},
    };
    const firstHead = box.querySelector('thead th');
    const row = box.querySelector('tbody tr');
    for (const col of cols) {
      const th = box.querySelector(`thead th[data-col="${col}"]`);
      if (!th) {
        out.cols[col] = null;
        continue;
      }
      // Scroll so the column sits just right of the variant column (as far as the box can scroll).
      box.scrollLeft = 0;
      box.scrollLeft = th.getBoundingClientRect().left - firstHead.getBoundingClientRect().right;
      const h = th.getBoundingClientRect();
      const f = firstHead.getBoundingClientRect();
      const cell = row.querySelector(`[data-col="${col}"]`).getBoundingClientRect();
      const rowHead = row.querySelector('th').getBoundingClientRect();
      const hit = document.elementFromPoint(cell.left + cell.width / 2, cell.top + cell.height / 2);
      const hitHead = document.elementFromPoint(rowHead.left + 4, rowHead.top + rowHead.height / 2);
      out.cols[col] = {
        scrollLeft: box.scrollLeft,
        th: { left: h.left, right: h.right },
        first: { left: f.left, right: f.right },
        rowHead: { left: rowHead.left, right: rowHead.right },
        cellHit: !!hit && hit.closest('[data-col]')?.getAttribute('data-col') === col,
        headHit: !!hitHead && hitHead.closest('th[scope="row"]') !== null,
      };
    }
    box.scrollLeft = 0;
    return out;
  }, cols);
  assert.ok(t.pageScrollWidth <= t.innerWidth, `${what}: the page scrolls sideways (${t.pageScrollWidth} > ${t.innerWidth} px)`);
  assert.ok(t.box.left >= 0 && t.box.right <= t.innerWidth, `${what}: the table box leaves the window sideways`);
  assert.ok(t.box.bottom - t.box.top <= t.innerHeight, `${what}: the table box is taller than the window (its scrollbar out of view)`);
  for (const col of cols) {
    const c = t.cols[col];
    assert.ok(c, `${what}: no ${col} column`);
    assert.ok(
      c.th.left >= c.first.right - 1 && c.th.right <= t.box.right + 1,
      `${what}: ${col} not visible beside the variant column: ${JSON.stringify({ ...c, box: t.box })}`,
    );
    assert.ok(
      Math.abs(c.first.left - t.box.left) <= 2 && Math.abs(c.rowHead.left - t.box.left) <= 2,
      `${what}: variant column scrolled away`,
    );
    assert.ok(c.cellHit, `${what}: a ${col} cell is covered`);
    assert.ok(c.headHit, `${what}: the variant column is not on top`);
  }
  return t;
}

async function shoot(page, file) {
  await settle(page);
  const out = path.join(ARTIFACTS, file);
  await page.screenshot({ path: out, fullPage: true });
  assert.ok(fs.statSync(out).size > 20_000, `${out} looks empty`);
  return out;
}

before(launchBrowser);
after(closeBrowser);

describe('many variants: labels, table, screenshots', () => {
  for (const name of MANY) {
    browserTest(
      `${name}: ${fixtures[name].variants.length} variants, no label overlaps, every label at 1400 px, table scrolls with the variant column fixed`,
      async () => {
        const r = fixtures[name];
        assert.ok(r.variants.length >= 30, `${name} has ${r.variants.length} variants`);
        const { page } = await openReport(name);
        const shown = await checkLabels(page, `${name} at 1400 px`);
        for (const [id, n] of Object.entries(shown))
          assert.equal(n, r.variants.length, `${name}: ${id}: every variant labelled at 1400 px`);
        const cols = ['registers', 'spillStores', 'spillLoads', 'occupancy', 'identicalTo'];
        const t = await checkTable(page, `${name} at 1400 px`, cols);
        assert.ok(t.scrolls, `${name}: the table is wider than the window at 1400 px (it should scroll, and this test check that)`);
        await shoot(page, `layout-${name}.png`);
        // A narrow panel (VS Code beside the editor): labels thin out rather than overlap; the table still scrolls in place.
        await page.setViewportSize({ width: 760, height: 900 });
        await page.waitForTimeout(200);
        await settle(page);
        const narrow = await checkLabels(page, `${name} at 760 px`);
        for (const [id, n] of Object.entries(narrow))
          assert.ok(n >= Math.min(8, r.variants.length), `${name}: ${id}: only ${n} labels at 760 px`);
        await checkTable(page, `${name} at 760 px`, cols);
        await shoot(page, `layout-${name}-narrow.png`);
      },
    );
  }

  browserTest('the panel (the same page in the webview host): 37 variants, no label overlaps, the table scrolls in place', async () => {
    const { page } = await openHost({ theme: 'dark' });
    await postResult(page, fixtures[MANY[0]]);
    const shown = await checkLabels(page, 'panel');
    for (const [id, n] of Object.entries(shown)) assert.equal(n, fixtures[MANY[0]].variants.length, `panel: ${id}: every variant labelled`);
    await checkTable(page, 'panel', ['registers', 'spillStores', 'occupancy', 'identicalTo']);
    await shoot(page, 'layout-panel-dark.png');
  });

  browserTest('compare report: the ladder of 6 kernels, no label overlaps, the table fits or scrolls in place', async () => {
    const { page } = await openReport('compare-reduce_unroll', { result: COMPARE });
    const shown = await checkLabels(page, 'compare');
    for (const [id, n] of Object.entries(shown)) assert.equal(n, 6, `compare: ${id}: every kernel labelled`);
    await checkTable(page, 'compare at 1400 px', COMPARE_COLS);
    await shoot(page, 'layout-compare.png');
    await page.setViewportSize({ width: 760, height: 900 });
    await page.waitForTimeout(200);
    await checkLabels(page, 'compare at 760 px');
    await checkTable(page, 'compare at 760 px', COMPARE_COLS);
    await shoot(page, 'layout-compare-narrow.png');
  });
});

// ------------------------------------------------------------------------------------------ flat charts

/** Per chart card: flat or drawn, its sentence, and its plotted values (datasets and whiskers). */
async function cards(page) {
  return page.evaluate(() =>
    Object.fromEntries(
      Object.entries(window.__unrollLensCharts).map(([id, chart]) => {
        const fig = chart.canvas.closest('figure');
        const w = chart.options.plugins.ulDecor?.whiskers;
        return [
          id,
          {
            flat: fig.hasAttribute('data-flat'),
            canvasShown: chart.canvas.closest('.ul-canvas-box').offsetParent !== null,
            note: fig.querySelector('.ul-flat-note').textContent,
            noteShown: fig.querySelector('.ul-flat-note').offsetParent !== null,
            series: [...chart.data.datasets.map(d => [...d.data]), ...(w ? [w.low, w.high] : [])],
          },
        ];
      }),
    ),
  );
}

/** This test's own reading of the rule: no plotted quantity takes two values over the rows. */
const compares = series =>
  series.some(vs => new Set(vs.filter(v => typeof v === 'number' && Number.isFinite(v)).map(v => v.toFixed(9))).size > 1);

describe('charts shown only when they carry information', () => {
  browserTest(
    'a static sweep whose predicted i-cache bars are all equal: a sentence with the value, not three identical bars',
    async () => {
      // static-two_trips: three variants predicted 0.89–1.16× alike, two without an entry.
      const r = fixtures['static-two_trips'];
      const predicted = r.variants.filter(v => v.icache?.predicted).map(v => `${v.icache.predicted.low}-${v.icache.predicted.high}`);
      assert.equal(new Set(predicted).size, 1, 'the fixture predicts one range for every variant with an entry');
      const { page } = await openReport('static-two_trips');
      const c = await cards(page);
      assert.equal(c.icache.flat, true, 'i-cache chart not drawn');
      assert.equal(c.icache.canvasShown, false);
      assert.equal(c.icache.noteShown, true);
      assert.match(c.icache.note, /^Not drawn: 3 of 5 variants have a value, all the same \(I-cache slowdown 1\.02, range 0\.89–1\.16\)/);
      for (const id of ['size', 'resources', 'unroll']) assert.equal(c[id].flat, false, `${id} drawn`);
      await shoot(page, 'layout-static-flat.png');
    },
  );

  browserTest(
    'every fixture: a chart is drawn exactly when some plotted value differs between rows; no label overlaps, wide or narrow',
    async () => {
      const all = [...Object.keys(fixtures).map(n => [n, undefined]), ['compare-reduce_unroll', COMPARE]];
      let flat = 0;
      let drawn = 0;
      for (const [name, result] of all) {
        const { page } = await openReport(name, result ? { result } : {});
        for (const [id, c] of Object.entries(await cards(page))) {
          const expectFlat = !compares(c.series);
          assert.equal(
            c.flat,
            expectFlat,
            `${name}: ${id}: ${expectFlat ? 'all values equal, yet drawn' : 'values differ, yet not drawn'}`,
          );
          assert.equal(c.canvasShown, !expectFlat, `${name}: ${id}: canvas shown`);
          assert.equal(c.noteShown, expectFlat, `${name}: ${id}: sentence shown`);
          if (expectFlat) flat++;
          else drawn++;
        }
        // and no overlapping or clipped axis labels at any size of result, wide or narrow
        await checkLabels(page, `${name} at 1400 px`);
        await page.setViewportSize({ width: 760, height: 900 });
        await page.waitForTimeout(150);
        await settle(page);
        await checkLabels(page, `${name} at 760 px`);
        await page.context().close();
      }
      assert.ok(flat >= 1 && drawn >= 20, `flat ${flat}, drawn ${drawn}: both sides of the rule exercised`);
    },
  );
});

test('the fixtures this file needs are there', () => {
  for (const name of MANY) assert.ok(fixtures[name], `${name} missing from ${path.relative(ROOT, FIXTURES)}`);
});
