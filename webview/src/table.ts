// The variants table: every number the charts draw (and the ones they do not), sortable by any
// column (numbers as numbers, missing values last in either direction), keyboard accessible
// (header buttons; rows with a roving tabindex, arrows to move, Enter/Space to select).
import type { SortDirection } from '../../src/panelMessages';
import { h, setText } from './dom';
import { fmtBytes, fmtRange, fmtShare, NONE } from './format';
import type { VariantView, ViewModel } from './model';
import { columns } from './columns';
import type { Column } from './columns';

export interface SortState {
  column: string;
  direction: SortDirection;
}

/** Fills an i-cache cell: the value, a measured or predicted badge, and the prediction beside a measurement. */
function fillIcacheCell(cell: HTMLTableCellElement, x: VariantView): void {
  const c = x.icache;
  cell.setAttribute('data-icache', c?.shown ?? 'none');
  if (!c || (!c.measured && !c.predicted)) {
    cell.replaceChildren(document.createTextNode(NONE));
    return;
  }
  const measured = c.shown === 'measured' && c.measured;
  const why = c.measured?.attribution && c.measured.attribution.cause !== 'none' ? c.measured.attribution.why : null;
  if (c.shown === 'not-icache' && c.measured) {
    // Measured slower, not for the instruction cache (issue 22): the slowdown and what it is instead.
    cell.replaceChildren(
      h('span', { class: 'ul-icache-value', text: `${c.measured.slowdown.toFixed(2)}×` }),
      ' ',
      h('span', { class: 'ul-badge ul-badge-not-icache', text: 'not i-cache' }),
    );
    cell.title = `${why ?? ''}\n${c.basis}`;
    return;
  }
  // Spaces between the parts: the cell reads (and copies) as icacheText gives it.
  const parts: (HTMLElement | string)[] = [
    h('span', { class: 'ul-icache-value', text: measured ? `${c.measured!.slowdown.toFixed(2)}×` : fmtRange(c.predicted) }),
    ' ',
    h('span', {
      class: `ul-badge ${measured ? 'ul-badge-measured' : 'ul-badge-predicted'}`,
      text: measured ? 'measured' : 'predicted',
    }),
  ];
  if (measured && c.predicted) parts.push(' ', h('span', { class: 'ul-icache-predicted', text: `(predicted ${fmtRange(c.predicted)})` }));
  cell.replaceChildren(...parts);
  const where = [
    c.bytes !== null ? `hot loop ${fmtBytes(c.bytes)}` : null,
    c.warpsPerSm !== null ? `${c.warpsPerSm} warps/SM (${c.warpsSource === 'achieved' ? 'achieved, ncu' : 'theoretical'})` : null,
    c.shape,
    c.measured?.noInstruction != null ? `no_instruction ${fmtShare(c.measured.noInstruction)} of stalls` : null,
    why,
  ].filter(Boolean);
  cell.title = `${where.join(' · ')}\n${c.basis}`;
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Sorted copy: numbers numerically, text with numeric collation, missing values always last. */
function sortVariants(rows: VariantView[], col: Column | undefined, direction: SortDirection): VariantView[] {
  if (!col) return rows;
  const sign = direction === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const va = col.sortValue(a);
    const vb = col.sortValue(b);
    const na = va === null || va === '' || (typeof va === 'number' && !Number.isFinite(va));
    const nb = vb === null || vb === '' || (typeof vb === 'number' && !Number.isFinite(vb));
    if (na || nb) return na === nb ? a.index - b.index : na ? 1 : -1;
    const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : collator.compare(String(va), String(vb));
    return c === 0 ? a.index - b.index : sign * c;
  });
}

export interface TableCallbacks {
  /** A row was clicked or activated from the keyboard. */
  onActivate(variantId: string): void;
  onSort(sort: SortState | null): void;
}

export class ResultTable {
  readonly element: HTMLTableElement;
  private readonly thead = h('thead');
  private readonly tbody = h('tbody');
  private rows = new Map<string, HTMLTableRowElement>();
  private cols: Column[] = [];
  private headerKey = '';
  private focusId: string | null = null;

  constructor(private readonly cb: TableCallbacks) {
    this.element = h('table', { class: 'ul-table', attrs: { 'aria-label': 'Variants: every value' } }, [
      h('caption', {
        class: 'ul-visually-hidden',
        text: 'Every variant and every value. Sort with the column buttons; select a row with Enter.',
      }),
      this.thead,
      this.tbody,
    ]);
    this.tbody.addEventListener('keydown', e => this.onKey(e));
  }

  render(m: ViewModel, selected: string | null, sort: SortState | null): void {
    this.cols = columns(m);
    const key = this.cols.map(c => c.id).join('|');
    if (key !== this.headerKey) {
      this.headerKey = key;
      this.thead.replaceChildren(
        h(
          'tr',
          {},
          this.cols.map(c => this.headerCell(c)),
        ),
      );
      this.rows.clear();
      this.tbody.replaceChildren();
    }
    for (const th of this.thead.querySelectorAll('th')) {
      const id = th.getAttribute('data-col');
      th.setAttribute('aria-sort', sort && sort.column === id ? (sort.direction === 'asc' ? 'ascending' : 'descending') : 'none');
    }
    const ordered = sort
      ? sortVariants(
          m.variants,
          this.cols.find(c => c.id === sort.column),
          sort.direction,
        )
      : m.variants;
    const seen = new Set<string>();
    const hadFocus = this.tbody.contains(document.activeElement);
    ordered.forEach((x, i) => {
      seen.add(x.v.id);
      let tr = this.rows.get(x.v.id);
      if (!tr) {
        tr = this.makeRow(x.v.id);
        this.rows.set(x.v.id, tr);
      }
      this.fillRow(tr, x, m);
      tr.setAttribute('aria-selected', String(x.v.id === selected));
      tr.classList.toggle('ul-selected', x.v.id === selected);
      if (this.tbody.children[i] !== tr) this.tbody.insertBefore(tr, this.tbody.children[i] ?? null);
    });
    for (const [id, tr] of this.rows) {
      if (!seen.has(id)) {
        tr.remove();
        this.rows.delete(id);
      }
    }
    // Roving tabindex: one row in the tab order (the focused or selected one, else the first).
    const focusId = [this.focusId, selected].find(id => id && this.rows.has(id)) ?? ordered[0]?.v.id ?? null;
    for (const [id, tr] of this.rows) tr.tabIndex = id === focusId ? 0 : -1;
    if (hadFocus && focusId && document.activeElement !== this.rows.get(focusId)) this.rows.get(focusId)?.focus();
  }

  private headerCell(c: Column): HTMLTableCellElement {
    const btn = h('button', { class: 'ul-sort', title: `${c.tip}. Click to sort.`, attrs: { type: 'button' } }, [
      h('span', { text: c.title }),
      h('span', { class: 'ul-sort-mark', attrs: { 'aria-hidden': 'true' } }),
    ]);
    btn.addEventListener('click', () => {
      const current = this.thead.querySelector(`th[data-col="${CSS.escape(c.id)}"]`)?.getAttribute('aria-sort');
      this.cb.onSort({ column: c.id, direction: current === 'ascending' ? 'desc' : 'asc' });
    });
    return h('th', { class: c.numeric ? 'ul-num' : '', attrs: { scope: 'col', 'data-col': c.id, 'aria-sort': 'none' } }, [btn]);
  }

  private makeRow(id: string): HTMLTableRowElement {
    const tr = h('tr', { attrs: { 'data-variant': id, 'aria-selected': 'false' } });
    tr.tabIndex = -1;
    tr.addEventListener('click', () => {
      this.focusId = id;
      this.cb.onActivate(id);
    });
    tr.addEventListener('focus', () => {
      this.focusId = id;
    });
    return tr;
  }

  private fillRow(tr: HTMLTableRowElement, x: VariantView, m: ViewModel): void {
    if (tr.cells.length !== this.cols.length) {
      tr.replaceChildren(
        ...this.cols.map((c, i) => {
          if (i === 0) {
            return h('th', { attrs: { scope: 'row', 'data-col': c.id } }, [
              h('span', { class: 'ul-label' }),
              h('span', { class: 'ul-badge ul-badge-best', text: 'best', hidden: true }),
              h('span', { class: 'ul-badge ul-badge-base', text: 'baseline', hidden: true }),
            ]);
          }
          return h('td', { class: c.numeric ? 'ul-num' : c.id === 'message' ? 'ul-message' : '', attrs: { 'data-col': c.id } });
        }),
      );
    }
    this.cols.forEach((c, i) => {
      const cell = tr.cells[i];
      if (i === 0) {
        setText(cell.querySelector('.ul-label')!, c.text(x));
        (cell.querySelector('.ul-badge-best') as HTMLElement).hidden = m.best?.v.id !== x.v.id;
        (cell.querySelector('.ul-badge-base') as HTMLElement).hidden = m.baseline?.v.id !== x.v.id;
        return;
      }
      if (c.id === 'icache') return fillIcacheCell(cell, x);
      setText(cell, c.text(x));
      if (c.id === 'status') cell.className = `ul-status ul-status-${x.v.status}`;
    });
  }

  private onKey(e: KeyboardEvent): void {
    const tr = (e.target as HTMLElement).closest('tr');
    if (!tr || tr.parentElement !== this.tbody) return;
    const rows = [...this.tbody.rows];
    const i = rows.indexOf(tr);
    let next: HTMLTableRowElement | undefined;
    if (e.key === 'ArrowDown') next = rows[i + 1];
    else if (e.key === 'ArrowUp') next = rows[i - 1];
    else if (e.key === 'Home') next = rows[0];
    else if (e.key === 'End') next = rows[rows.length - 1];
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      const id = tr.getAttribute('data-variant');
      if (id) this.cb.onActivate(id);
      return;
    } else return;
    e.preventDefault();
    if (!next) return;
    for (const r of rows) r.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }
}
