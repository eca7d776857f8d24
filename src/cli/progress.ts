// A one-line progress bar on stderr for interactive terminals; silent otherwise.
export class Progress {
  private done_ = 0;
  private lastDraw = 0;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly write: ((s: string) => void) | null,
  ) {}

  tick(item: string): void {
    this.done_++;
    if (!this.write) return;
    const now = Date.now();
    if (now - this.lastDraw < 50 && this.done_ < this.total) return;
    this.lastDraw = now;
    const width = 24;
    const filled = Math.round((this.done_ / Math.max(1, this.total)) * width);
    const name = item.length > 40 ? '…' + item.slice(-39) : item;
    this.write(`\r${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done_}/${this.total} ${name}\x1b[K`);
  }

  done(): void {
    if (this.write && this.total > 0) this.write('\r\x1b[K');
  }
}
