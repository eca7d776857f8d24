// The language status item of CUDA files: the toolchain at a glance ("nvcc 13.0 · sm_90 · H100"),
// the other tools' versions and the GPUs in its detail, a warning when something the settings
// need is missing, and a link to the Get Started walkthrough. The server finds the tools and words
// everything (ToolchainInfoRequest, cached there per settings); this shows its answer, asks again
// when the server reports a new toolchain, and sets the context keys that complete the
// walkthrough's steps.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  Commands,
  CUDA_FILE_PATTERN,
  CUDA_LANGUAGE_IDS,
  foundContextKey,
  ToolchainInfo,
  ToolchainInfoRequest,
  ToolchainStatus,
} from '../protocol';

const SEVERITY: Record<ToolchainInfo['severity'], vscode.LanguageStatusSeverity> = {
  information: vscode.LanguageStatusSeverity.Information,
  warning: vscode.LanguageStatusSeverity.Warning,
  error: vscode.LanguageStatusSeverity.Error,
};

/** What the item shows now (tests read it: VS Code has no API to read a language status item back). */
export interface ToolchainStatusShown {
  text: string;
  detail: string;
  severity: ToolchainInfo['severity'];
  busy: boolean;
}

export class ToolchainLanguageStatus implements vscode.Disposable {
  private readonly item: vscode.LanguageStatusItem;
  private info: ToolchainInfo | null = null;
  /** The last toolchain notification's survey count, summary and problem: a new one means the tools changed. */
  private lastSeen: string | null = null;

  constructor(private readonly client: LanguageClient) {
    const selector: vscode.DocumentSelector = [
      ...CUDA_LANGUAGE_IDS.map(language => ({ language })),
      { scheme: 'file', pattern: CUDA_FILE_PATTERN },
    ];
    this.item = vscode.languages.createLanguageStatusItem('unrollLens.toolchain', selector);
    this.item.name = 'Unroll Lens toolchain';
    this.item.text = 'CUDA toolchain';
    this.item.busy = true;
    this.item.command = { title: 'Get Started', command: Commands.openWalkthrough, tooltip: 'Check the CUDA tools step by step' };
  }

  /** The server's answer (looked for again when `recheck`), shown and returned. */
  async refresh(recheck = false): Promise<ToolchainInfo> {
    this.item.busy = true;
    try {
      const info = await this.client.sendRequest(ToolchainInfoRequest, { recheck });
      this.show(info);
      return info;
    } finally {
      this.item.busy = false;
    }
  }

  /** The server reported its toolchain (status bar notification): ask for the details when it changed. */
  changed(s: ToolchainStatus): void {
    if (s.building) return;
    const seen = `${s.survey}\n${s.summary}\n${s.problem}`;
    if (seen === this.lastSeen) return;
    this.lastSeen = seen;
    this.refresh().catch(() => undefined);
  }

  shown(): ToolchainStatusShown | null {
    return this.info ? { text: this.item.text, detail: this.item.detail ?? '', severity: this.info.severity, busy: this.item.busy } : null;
  }

  private show(info: ToolchainInfo): void {
    this.info = info;
    this.item.text = info.text;
    this.item.detail = info.detail;
    this.item.severity = SEVERITY[info.severity];
    for (const c of info.checks) void vscode.commands.executeCommand('setContext', foundContextKey(c.id), c.found);
  }

  dispose(): void {
    this.item.dispose();
  }
}
