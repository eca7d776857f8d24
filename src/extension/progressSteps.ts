// LSP work-done progress → VS Code progress steps. LSP reports an absolute percentage; VS Code's
// `progress.report` adds increments, so each step carries the difference to the last one.
// No `vscode` import: unit tests run this without an editor.
import type { WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageclient/node';

export interface ProgressStep {
  /** Percent to add to the bar. */
  increment?: number;
  message?: string;
}

export class ProgressSteps {
  private percentage = 0;

  /** The step to show for one LSP progress value, or null when nothing changes. */
  next(p: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd): ProgressStep | null {
    // begin's title and message repeat what the notification's title already says; end closes
    // nothing here (the notification closes when the request returns).
    if (p.kind !== 'report') {
      if (p.kind === 'begin' && p.percentage !== undefined) return this.advance(p.percentage, undefined);
      return null;
    }
    if (p.percentage !== undefined) return this.advance(p.percentage, p.message);
    return p.message ? { message: p.message } : null;
  }

  private advance(percentage: number, message: string | undefined): ProgressStep | null {
    // The bar cannot move back: a lower percentage (a server starting a new phase) adds nothing.
    const increment = Math.max(0, percentage - this.percentage);
    this.percentage = Math.max(this.percentage, percentage);
    const step: ProgressStep = {};
    if (increment) step.increment = increment;
    if (message) step.message = message;
    return increment || message ? step : null;
  }
}
