// Results panel entry point: a VS Code webview (host mode) or a standalone HTML report. Renders
// one SweepResult: header, charts, a sortable table; in host mode it posts reveal / apply /
// export / cancel and persists its state for the panel serializer.
import type { PanelProgress, PanelState } from '../../src/panelMessages';
import type { SweepResult } from '../../src/protocol';
import { ChartPanel } from './charts';
import { button, h, setText } from './dom';
import { fmtInt, fmtShare, fmtSpeedup, fmtUs } from './format';
import { connectHost, embeddedResult, parseHostMessage } from './messages';
import type { Host } from './messages';
import { buildModel } from './model';
import type { ViewModel } from './model';
import { ResultTable } from './table';
import type { SortState } from './table';
import { readTheme, watchTheme } from './theme';
import { runTimingText } from '../../src/schema/runTimingText';
import { applyBestOffer, confidenceLines } from '../../src/schema/applyBest';
import { pointsText } from '../../src/schema/sweepCounts';
import type { Theme } from './theme';

const ORIGIN: Record<SweepResult['origin'], string> = {
  sweep: 'Kernel sweep',
  variants: 'SASS variants of one loop',
  bench: 'GPU benchmark of one loop',
  compare: 'Kernels of one program timed side by side',
};

declare global {
  interface Window {
    /** Set by the test pages before the script loads; exposes the Chart instances. */
    __unrollLensTest?: boolean;
    __unrollLensCharts?: Record<string, unknown>;
  }
}

class App {
  private result: SweepResult | null = null;
  private model: ViewModel | null = null;
  private progress: PanelProgress | null = null;
  private selected: string | null = null;
  private sort: SortState | null = null;
  private theme: Theme = readTheme();

  private readonly title = h('h1', { class: 'ul-title' });
  private readonly subtitle = h('p', { class: 'ul-subtitle' });
  private readonly meta = h('dl', { class: 'ul-meta' });
  private readonly applyBest: HTMLButtonElement;
  private readonly progressBox: HTMLElement;
  private readonly progressText = h('span', { class: 'ul-progress-text', attrs: { role: 'status', 'aria-live': 'polite' } });
  private readonly progressBar = h('progress', { class: 'ul-progress-bar' });
  private readonly incomplete = h('p', { class: 'ul-incomplete', hidden: true });
  private readonly notes = h('ul', { class: 'ul-notes', attrs: { 'aria-label': 'Notes' } });
  private readonly failedBox = h('p', { class: 'ul-failed', hidden: true, attrs: { role: 'note' } });
  private readonly selection = h('div', { class: 'ul-selection', attrs: { 'aria-live': 'polite' } });
  private readonly selectionText = h('span', { class: 'ul-selection-text' });
  private readonly applySelected: HTMLButtonElement;
  private readonly empty = h('p', { class: 'ul-empty', text: 'Waiting for results…' });
  /** What the i-cache column's two badges mean (issue 13). */
  private readonly icacheLegend = h('p', { class: 'ul-icache-legend', hidden: true, attrs: { role: 'note' } });
  private readonly content: HTMLElement;
  private readonly charts: ChartPanel;
  private readonly table: ResultTable;
  private readonly tableHeading = h('h2', { text: 'Variants' });

  constructor(
    root: HTMLElement,
    private readonly host: Host,
  ) {
    const hostOnly = (el: HTMLElement) => {
      el.classList.add('ul-host-only');
      if (host.standalone) el.hidden = true;
      return el;
    };
    this.applyBest = button(
      'Apply best',
      'ul-button ul-primary',
      () => this.result?.best && this.post({ type: 'apply', variantId: this.result.best }),
    );
    this.applySelected = button('Apply', 'ul-button', () => this.selected && this.post({ type: 'apply', variantId: this.selected }));
    const actions = h('div', { class: 'ul-actions' }, [
      hostOnly(this.applyBest),
      hostOnly(button('Export CSV', 'ul-button ul-secondary', () => this.post({ type: 'export', format: 'csv' }))),
      hostOnly(button('Export JSON (T4)', 'ul-button ul-secondary', () => this.post({ type: 'export', format: 't4' }))),
    ]);
    this.progressBox = h('div', { class: 'ul-progress', hidden: true }, [
      this.progressText,
      this.progressBar,
      hostOnly(button('Cancel', 'ul-button ul-secondary ul-cancel', () => this.post({ type: 'cancel' }))),
    ]);
    const chartRoot = h('div', { class: 'ul-charts' });
    this.charts = new ChartPanel(chartRoot, id => this.select(id, true));
    this.table = new ResultTable({ onActivate: id => this.select(id, true), onSort: s => this.setSort(s) });
    this.selection.append(this.selectionText, hostOnly(this.applySelected));
    this.content = h(
      'div',
      { class: 'ul-content', hidden: true },
      [
        h('header', { class: 'ul-header' }, [
          h('div', { class: 'ul-title-row' }, [this.title, actions]),
          this.subtitle,
          this.meta,
          this.progressBox,
          this.incomplete,
          this.failedBox,
          this.notes,
        ]),
        h('section', { class: 'ul-chart-section', attrs: { 'aria-label': 'Charts' } }, [chartRoot]),
        h('section', { class: 'ul-table-section', attrs: { 'aria-label': 'Variants table' } }, [
          this.tableHeading,
          this.icacheLegend,
          this.selection,
          h('div', { class: 'ul-table-scroll' }, [this.table.element]),
        ]),
        host.standalone
          ? h('footer', { class: 'ul-footer', text: 'Unroll Lens report. Open the result in VS Code to apply a variant.' })
          : null,
      ].filter((x): x is HTMLElement => x !== null),
    );
    root.replaceChildren(this.empty, this.content);
    if (host.standalone) document.body.classList.add('ul-standalone');

    watchTheme(() => {
      this.theme = readTheme();
      if (this.model) this.charts.render(this.model, this.theme, this.selected);
    });
    if (window.__unrollLensTest) {
      Object.defineProperty(window, '__unrollLensCharts', { get: () => this.charts.instances, configurable: true });
    }
  }

  restore(state: PanelState): void {
    this.selected = state.selected;
    this.sort = state.sort;
    if (state.result) this.setResult(state.result, null);
  }

  setResult(result: SweepResult, progress: PanelProgress | null): void {
    this.result = result;
    this.progress = result.complete ? null : progress;
    this.model = buildModel(result);
    if (this.selected && !this.model.byId.has(this.selected)) this.selected = null;
    this.empty.hidden = true;
    this.content.hidden = false;
    this.renderHeader(this.model);
    this.charts.render(this.model, this.theme, this.selected);
    this.table.render(this.model, this.selected, this.sort);
    this.renderSelection();
    this.save();
  }

  select(id: string | null, reveal: boolean): void {
    if (!this.model || (id !== null && !this.model.byId.has(id))) return;
    const changed = id !== this.selected;
    this.selected = id;
    if (changed) {
      this.charts.setSelected(id);
      this.table.render(this.model, id, this.sort);
      this.renderSelection();
      this.save();
    }
    if (reveal && id) this.post({ type: 'reveal', variantId: id });
  }

  private setSort(sort: SortState | null): void {
    this.sort = sort;
    if (this.model) this.table.render(this.model, this.selected, sort);
    this.save();
  }

  private post(m: Parameters<Host['post']>[0]): void {
    this.host.post(m);
  }

  private save(): void {
    this.host.saveState({ version: 1, result: this.result, selected: this.selected, sort: this.sort });
  }

  private renderHeader(m: ViewModel): void {
    const r = m.result;
    setText(this.tableHeading, m.comparison ? 'Kernels' : 'Variants');
    if (m.comparison) this.renderComparisonMeta(m);
    else this.renderSweepMeta(m);
    this.renderProgress(r, m);
    // what a GPU run cost, as the CLI's footer and the hover say it
    const cost = !r.static && r.timing ? runTimingText(r.timing) : null;
    const notes = cost ? [...r.notes, cost] : r.notes;
    this.notes.replaceChildren(...notes.map(n => h('li', { text: n })));
    this.notes.hidden = !notes.length;
    this.renderIcacheLegend(m);
  }

  private renderMeta(items: [string, string][]): void {
    this.meta.replaceChildren(
      ...items.map(([k, v]) =>
        h('div', { class: 'ul-meta-item', attrs: { 'data-meta': k } }, [h('dt', { text: k }), h('dd', { text: v })]),
      ),
    );
  }

  /** A kernel comparison (issue 26): the program, its kernels, the baseline and the fastest; nothing to apply. */
  private renderComparisonMeta(m: ViewModel): void {
    const r = m.result;
    const name = r.file.replace(/^.*[\\/]/, '');
    setText(this.title, `${name} · compare · ${m.variants.length} kernel${m.variants.length === 1 ? '' : 's'}`);
    this.title.title = r.file;
    setText(this.subtitle, r.file);
    const best = m.best;
    this.renderMeta([
      ['Kind', ORIGIN[r.origin]],
      ['Arch', r.arch],
      ['GPU', r.gpu ?? 'no GPU run'],
      ['nvcc', r.nvcc ?? 'unknown'],
      [
        'Baseline',
        m.baseline ? `${m.baseline.v.label} (speedups are its median / each kernel's)` : 'none: the baseline kernel got no time',
      ],
      ['Fastest', best ? `${best.v.label}${best.num('speedup') !== null ? ` (${fmtSpeedup(best.num('speedup'))})` : ''}` : 'none yet'],
      ['Recorded', formatTime(r.createdAt)],
    ]);
    // different kernels, not unroll factors of one: there is nothing to write into the file
    this.applyBest.hidden = true;
    this.applySelected.hidden = true;
  }

  private renderSweepMeta(m: ViewModel): void {
    const r = m.result;
    this.applyBest.hidden = this.host.standalone;
    this.applySelected.hidden = this.host.standalone;
    const loops = r.loops.map(l => `L${l.line}`);
    setText(
      this.title,
      `${r.kernel} · ${loops.length === 1 ? `loop ${loops[0]}` : loops.length ? `loops ${loops.join(', ')}` : Object.keys(r.params).length ? Object.keys(r.params).join(', ') : 'no loops'}`,
    );
    this.title.title = r.kernel;
    setText(this.subtitle, `${r.file}:${r.kernelLine}`);
    const best = m.best;
    const bestText = best
      ? `${best.v.label}${m.gpu && best.num('speedup') !== null ? ` (${fmtSpeedup(best.num('speedup'))})` : ''}${r.bestBasis ? ` — ${r.bestBasis}` : ''}`
      : 'none yet';
    const items: [string, string][] = [
      ['Kind', ORIGIN[r.origin] ?? r.origin],
      ['Arch', r.arch],
      ['GPU', r.gpu ?? 'static: no GPU run'],
      ['nvcc', r.nvcc ?? 'unknown'],
      ['Strategy', r.strategy],
      ['Evaluated', pointsText(r)],
      ['Best', bestText],
      // how sure the GPU timings are of the best, and whether Apply best is offered (issue 25)
      ...(r.confidence ? [['Confidence', confidenceLines(r, id => m.byId.get(id)?.v.label ?? id).join(' · ')] as [string, string]] : []),
      ['Recorded', formatTime(r.createdAt)],
    ];
    this.renderMeta(items);
    // offered only when the best is distinguishable from the file as written (the result's confidence)
    const offer = applyBestOffer(r);
    this.applyBest.disabled = !best || !best.ok || best.v.id === r.baseline || !offer.offer;
    this.applyBest.textContent = best ? `Apply best (${best.v.label})` : 'Apply best';
    this.applyBest.title = offer.why ?? '';
  }

  /** The progress bar while running; the incomplete notice and the failures after. */
  private renderProgress(r: SweepResult, m: ViewModel): void {
    const running = !r.complete && this.progress !== null;
    this.progressBox.hidden = !running;
    if (running && this.progress) {
      const { done, total, atMost } = this.progress;
      setText(this.progressText, `${this.progress.message} (${done} of ${atMost && total > done ? 'at most ' : ''}${total})`);
      this.progressBar.max = Math.max(1, this.progress.total);
      this.progressBar.value = Math.min(this.progress.done, this.progress.total);
    }
    this.incomplete.hidden = r.complete || running;
    setText(
      this.incomplete,
      m.comparison
        ? 'Incomplete result: the run was cancelled or stopped before every kernel was timed.'
        : `Incomplete result: ${pointsText(r)} measured (the run was cancelled or stopped).`,
    );

    this.failedBox.hidden = !m.failed.length;
    setText(
      this.failedBox,
      m.failed.length ? `Not charted: ${m.failed.map(x => `${x.v.label} (${x.v.status})`).join(', ')}. The table shows why.` : '',
    );
  }

  private renderIcacheLegend(m: ViewModel): void {
    this.icacheLegend.hidden = !m.icache;
    if (!m.icache) return;
    const against = m.icacheReference ?? 'the same loop at a size that fits';
    this.icacheLegend.replaceChildren(
      h('span', { text: 'I-cache slowdown: ' }),
      h('span', { class: 'ul-badge ul-badge-measured', text: 'measured' }),
      h('span', {
        text: ` this variant's median ÷ ${against}'s on the GPU (the most unrolled variant measured whose hot loop fits); it replaces the prediction. `,
      }),
      h('span', { class: 'ul-badge ul-badge-predicted', text: 'predicted' }),
      h('span', {
        text: ' the range the i-cache model gives from the SASS alone, at the warps per SM shown in the cell tooltip, until the variant runs on a GPU. ',
      }),
      h('span', { class: 'ul-badge ul-badge-not-icache', text: 'not i-cache' }),
      h('span', {
        text: ' measured slower, but not for the instruction cache: its hot loop fits, or its no_instruction stalls stay under 10 % or under 5 points above the reference (the tooltip says which, and the top stall).',
      }),
    );
  }

  private renderSelection(): void {
    const x = this.selected ? this.model?.byId.get(this.selected) : null;
    if (!x) {
      setText(this.selectionText, `Click a bar or a row to select a ${this.model?.comparison ? 'kernel' : 'variant'}.`);
      this.applySelected.disabled = true;
      this.applySelected.textContent = 'Apply';
      return;
    }
    const parts = [`Selected: ${x.v.label}`, x.v.status];
    if (x.ok && this.model?.gpu) parts.push(`speedup ${fmtSpeedup(x.num('speedup'))}`, `median ${fmtUs(x.num('medianMs'))} µs`);
    if (x.ok) parts.push(`${fmtInt(x.num('kernelInstructions'))} instructions`, `${fmtInt(x.num('registers'))} registers`);
    if (x.ok && x.num('executedInstructions') !== null) parts.push(`${fmtInt(x.num('executedInstructions'))} executed`);
    if (x.ok && x.stallShare) parts.push(`no_instruction ${fmtShare(x.stallShare.no_instruction ?? 0)}`);
    if (x.ref) parts.push(`identical to ${x.ref.label}`);
    setText(this.selectionText, parts.join(' · '));
    this.applySelected.disabled = !x.ok || x.v.id === 'as-written';
    this.applySelected.textContent = `Apply ${x.v.label}`;
  }
}

function formatTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function main(): void {
  const host = connectHost();
  const root = document.getElementById('app') ?? document.body.appendChild(h('main', { attrs: { id: 'app' } }));
  const app = new App(root, host);
  if (host.standalone) {
    const result = embeddedResult();
    if (result) app.setResult(result, null);
    else root.replaceChildren(h('p', { class: 'ul-empty', text: 'This report holds no readable result.' }));
    return;
  }
  window.addEventListener('message', e => {
    const m = parseHostMessage(e.data);
    if (!m) return;
    if (m.type === 'result') app.setResult(m.result, m.progress ?? null);
    else app.select(m.variantId, false);
  });
  const state = host.loadState();
  if (state) app.restore(state);
  host.post({ type: 'ready' });
}

main();
