// Draws the speedup heatmap (heatmap.ts) as an accessible HTML table per grid: column headers the
// first loop's factors, row headers the second's, the speedup printed in each cell, colours and
// marks from panel.css classes (no inline styles: the page's CSP allows none). A click or Enter
// selects the cell's variant; arrow keys move between cells (one cell in the tab order).
import { h } from './dom';
import { fmtFactor, fmtSpeedup, fmtUs } from './format';
import { HEAT_STEPS, levelRange } from './heatmap';
import type { HeatCell, HeatGrid, Heatmap } from './heatmap';
import type { ViewModel } from './model';

/** The class of a colour step: ul-heat-f1..4 faster, ul-heat-s1..4 slower, ul-heat-n neutral. */
function levelClass(level: number): string {
  return level > 0 ? `ul-heat-f${level}` : level < 0 ? `ul-heat-s${-level}` : 'ul-heat-n';
}

/** The cell's hover text: the variant, its speedup with the IQR, median, noise, best, identical code; or why it is empty. */
function cellTitle(c: HeatCell, m: ViewModel): string {
  const x = c.view;
  const lines = [x?.v.label ?? `L${m.result.loops[0].line} ${fmtFactor(c.x)} · L${m.result.loops[1].line} ${fmtFactor(c.y)}`];
  if (c.empty !== null || !x) return [...lines, c.empty ?? ''].join('\n');
  const iqr = x.speedupLow !== null && x.speedupHigh !== null ? ` (IQR ${x.speedupLow.toFixed(3)}–${x.speedupHigh.toFixed(3)}×)` : '';
  lines.push(`speedup ${fmtSpeedup(c.speedup)}${iqr} vs the file as written`, `median ${fmtUs(x.num('medianMs'))} µs`);
  if (x.withinNoise !== null)
    lines.push(x.withinNoise ? 'within noise of the file as written' : 'outside the noise of the file as written');
  if (c.best) lines.push(`best: ${m.result.bestBasis ?? 'fastest median'}`);
  if (x.ref) lines.push(`same machine code as ${x.ref.label}: measured once`);
  if (c.asWritten) lines.push("the loops' factors as written");
  return lines.join('\n');
}

function cellElement(c: HeatCell, xi: number, yi: number, m: ViewModel, selected: string | null): HTMLTableCellElement {
  const cls = ['ul-heat-cell', c.empty !== null ? 'ul-heat-empty' : levelClass(c.level)];
  if (c.noise) cls.push('ul-heat-noise');
  if (c.best) cls.push('ul-heat-best');
  if (c.view?.ref) cls.push('ul-heat-same');
  if (c.asWritten) cls.push('ul-heat-written');
  const id = c.view?.v.id ?? null;
  if (id !== null && id === selected) cls.push('ul-selected');
  const attrs: Record<string, string> = { 'data-xi': String(xi), 'data-yi': String(yi), 'data-level': String(c.level) };
  if (id !== null) attrs['data-variant'] = id;
  attrs['aria-selected'] = String(id !== null && id === selected);
  const body: (HTMLElement | string)[] =
    c.empty === null
      ? [h('span', { class: 'ul-heat-value', text: fmtSpeedup(c.speedup) })]
      : [h('span', { class: 'ul-visually-hidden', text: `empty: ${c.empty}` })];
  if (c.best) body.push(h('span', { class: 'ul-heat-tag', text: 'best' }));
  else if (c.asWritten) body.push(h('span', { class: 'ul-heat-tag', text: 'as written' }));
  const td = h('td', { class: cls.join(' '), title: cellTitle(c, m), attrs }, body);
  td.tabIndex = -1;
  return td;
}

function gridTable(hm: Heatmap, g: HeatGrid, m: ViewModel, selected: string | null): HTMLTableElement {
  const [lx, ly] = [hm.x.line, hm.y.line];
  const params = Object.entries(g.params).map(([k, v]) => `${k}=${v}`);
  const head = [
    h('tr', {}, [
      h('td', { class: 'ul-heat-corner', attrs: { colspan: '2', rowspan: '2' } }),
      h('th', { class: 'ul-heat-xname', text: `Loop L${lx} unroll →`, attrs: { scope: 'colgroup', colspan: String(hm.x.values.length) } }),
    ]),
    h(
      'tr',
      {},
      hm.x.values.map(f => h('th', { class: 'ul-heat-x', text: fmtFactor(f), attrs: { scope: 'col', 'data-x': String(f) } })),
    ),
  ];
  const body = g.rows.map((row, yi) =>
    h('tr', {}, [
      yi === 0
        ? h('th', { class: 'ul-heat-yname', text: `Loop L${ly} unroll ↓`, attrs: { scope: 'rowgroup', rowspan: String(g.rows.length) } })
        : null,
      h('th', { class: 'ul-heat-y', text: fmtFactor(hm.y.values[yi]), attrs: { scope: 'row', 'data-y': String(hm.y.values[yi]) } }),
      ...row.map((c, xi) => cellElement(c, xi, yi, m, selected)),
    ]),
  );
  const label = `Speedup vs the file as written per point: loop L${lx}'s factor across, loop L${ly}'s down${params.length ? `, ${params.join(', ')}` : ''}`;
  return h(
    'table',
    { class: 'ul-heatmap', attrs: { role: 'grid', 'aria-readonly': 'true', 'aria-label': label, 'data-params': params.join(',') } },
    [
      params.length ? h('caption', { class: 'ul-heat-params', text: params.join(' · ') }) : null,
      h('thead', {}, head),
      h('tbody', {}, body),
    ],
  );
}

/** The colour scale and the marks, with the speedups each step covers. */
function legend(hm: Heatmap, m: ViewModel): HTMLElement {
  const swatch = (cls: string, title?: string) => h('span', { class: `ul-heat-swatch ${cls}`, title, attrs: { 'aria-hidden': 'true' } });
  const steps: HTMLElement[] = [];
  for (let l = -HEAT_STEPS; l <= HEAT_STEPS; l++) {
    const r = levelRange(l, hm.scaleMax);
    steps.push(swatch(levelClass(l), l === 0 ? '1× (or within noise)' : `${r.low.toFixed(3)}–${r.high.toFixed(3)}×`));
  }
  const lo = levelRange(-HEAT_STEPS, hm.scaleMax).low;
  const hi = levelRange(HEAT_STEPS, hm.scaleMax).high;
  const item = (children: (HTMLElement | string)[], key: string) => h('li', { attrs: { 'data-legend': key } }, children);
  return h('ul', { class: 'ul-heat-legend', attrs: { 'aria-label': 'Heatmap legend' } }, [
    item(
      [
        h('span', { text: `Slower ${lo.toFixed(2)}×` }),
        h('span', { class: 'ul-heat-scale' }, steps),
        h('span', { text: `${hi.toFixed(2)}× faster than the file as written` }),
      ],
      'scale',
    ),
    item([swatch('ul-heat-n ul-heat-noise'), 'Within noise of the file as written (same code, or IQRs within 3 % drift)'], 'noise'),
    item([swatch('ul-heat-n ul-heat-best'), `Best (${m.best?.v.label ?? 'none yet'})`], 'best'),
    item([swatch('ul-heat-empty'), 'Empty: not measured or failed (hover for why)'], 'empty'),
    ...(m.variants.some(x => x.ref)
      ? [
          item(
            [h('span', { class: 'ul-heat-same-sample', text: '1.00×' }), 'Italic value: same machine code as another point, measured once'],
            'same',
          ),
        ]
      : []),
  ]);
}

export class HeatmapView {
  readonly element = h('div', { class: 'ul-heat-body' });

  constructor(private readonly onPick: (variantId: string) => void) {
    this.element.addEventListener('click', e => {
      const id = (e.target as HTMLElement).closest('td[data-variant]')?.getAttribute('data-variant');
      if (id) this.onPick(id);
    });
    this.element.addEventListener('keydown', e => this.onKey(e));
  }

  render(hm: Heatmap, m: ViewModel, selected: string | null): void {
    const focused = this.element.contains(document.activeElement) ? (document.activeElement as HTMLElement) : null;
    const where = focused?.closest('table')
      ? [this.tables().indexOf(focused.closest('table')!), focused.getAttribute('data-xi'), focused.getAttribute('data-yi')]
      : null;
    this.element.replaceChildren(
      legend(hm, m),
      ...hm.grids.map(g => h('div', { class: 'ul-heat-scroll' }, [gridTable(hm, g, m, selected)])),
    );
    // One cell in the tab order: the focused one, else the selected, else the best, else the first.
    const cells = [...this.element.querySelectorAll<HTMLElement>('td.ul-heat-cell')];
    const again = where
      ? this.tables()[where[0] as number]?.querySelector<HTMLElement>(`td[data-xi="${where[1]}"][data-yi="${where[2]}"]`)
      : null;
    const tab =
      again ?? cells.find(c => c.classList.contains('ul-selected')) ?? cells.find(c => c.classList.contains('ul-heat-best')) ?? cells[0];
    if (tab) tab.tabIndex = 0;
    again?.focus();
  }

  private tables(): HTMLTableElement[] {
    return [...this.element.querySelectorAll('table')];
  }

  private onKey(e: KeyboardEvent): void {
    const td = (e.target as HTMLElement).closest('td.ul-heat-cell');
    if (!td) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      const id = td.getAttribute('data-variant');
      if (id) this.onPick(id);
      return;
    }
    const move: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const d = move[e.key];
    if (!d) return;
    e.preventDefault();
    const xi = Number(td.getAttribute('data-xi')) + d[0];
    const yi = Number(td.getAttribute('data-yi')) + d[1];
    const next = td.closest('table')?.querySelector<HTMLElement>(`td[data-xi="${xi}"][data-yi="${yi}"]`);
    if (!next) return;
    for (const c of this.element.querySelectorAll<HTMLElement>('td.ul-heat-cell')) c.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }
}
