// The CUDA toolchain as the server's services share it: found once per settings, its status
// (and what is being built) sent to the status bar, the arch and compile flags for a file.
import * as path from 'path';
import { CancellationToken, Connection, ProgressToken } from 'vscode-languageserver/node';
import {
  CompileFlags,
  ToolSurvey,
  ToolTimeout,
  Toolchain,
  chooseArch,
  flagsOriginText,
  normaliseArch,
  probeCounterPermission,
  resolveCompileFlags,
  surveyToolchain,
  toolchainOf,
  toolchainSummary,
  withToolTimeouts,
} from '../engine';
import { Settings, ToolchainInfo, ToolchainStatus, ToolchainStatusNotification } from '../protocol';
import { disassemblerProblem, toolchainInfo, TRUST_FIX, unavailableToolchainInfo } from './toolChecks';

/** Why nothing runs: the workspace is not trusted. */
export const RESTRICTED_MODE =
  'Restricted Mode: Unroll Lens analyses this workspace but builds and runs nothing (no nvcc, no GPU runs) until you trust it';

export class UntrustedWorkspaceError extends Error {
  constructor() {
    super(`${RESTRICTED_MODE} (Manage Workspace Trust).`);
  }
}

export class ServerToolchain {
  /** Every tool looked for once per settings (nvcc may be missing: builds then fail with its fix). */
  private surveyed: Promise<ToolSurvey> | null = null;
  /** Surveys finished so far (the status notification carries it: the client asks for details when it changes). */
  private surveys = 0;
  private problem: string | null = null;
  /** VS Code's Workspace Trust, from the client; until it says so, nothing is run. */
  private trustedNow = false;

  constructor(
    private readonly connection: Connection,
    private readonly settings: () => Settings,
    private readonly workspaceRoots: () => string[],
  ) {}

  get trusted(): boolean {
    return this.trustedNow;
  }

  /** Trust granted (or known at start): tools may be looked for and run from now on. */
  setTrusted(trusted: boolean): void {
    this.trustedNow = trusted;
    this.reset();
  }

  /** Settings changed: the tools may be elsewhere now; found again on next use. */
  reset(): void {
    this.surveyed = null;
    this.problem = null;
  }

  log(msg: string): void {
    this.connection.console.log(`[sass] ${msg}`);
  }

  /**
   * The toolchain, held to the settings' time limits; `file` (the source being built) names the
   * file in a timeout's message. Each call gets its own limited runner: one request's hang is
   * answered at once to its later callers, and a new request tries again.
   */
  tools(file?: string): Promise<Toolchain> {
    return this.survey().then(s => this.limited(toolchainOf(s), file));
  }

  /** Every tool looked for (once per settings, cached): what builds use and what the checks report. */
  survey(): Promise<ToolSurvey> {
    // Even `nvcc --version` is a program run: an untrusted repository may name nvcc's path.
    if (!this.trustedNow) {
      this.problem = `${RESTRICTED_MODE}.`;
      this.connection.sendNotification(ToolchainStatusNotification, { summary: null, problem: this.problem, building: null });
      return Promise.reject(new UntrustedWorkspaceError());
    }
    if (!this.surveyed) {
      const s = this.settings();
      const paths: Record<string, string> = {};
      if (s.toolchain.nvccPath) paths.nvcc = s.toolchain.nvccPath;
      if (s.toolchain.cuobjdumpPath) paths.cuobjdump = s.toolchain.cuobjdumpPath;
      if (s.toolchain.nvdisasmPath) paths.nvdisasm = s.toolchain.nvdisasmPath;
      if (s.toolchain.ncuPath) paths.ncu = s.toolchain.ncuPath;
      const surveyed = surveyToolchain({ paths, cudaHome: s.toolchain.cudaHome || undefined });
      this.surveyed = surveyed;
      surveyed.then(
        t => {
          if (this.surveyed !== surveyed) return; // settings changed meanwhile: a newer survey reports
          this.surveys++;
          this.problem = t.nvccMissing ? t.nvccMissing.message : disassemblerProblem(t);
          this.log(
            `nvcc ${t.nvcc ? `${t.nvcc.version} at ${t.nvcc.path}` : 'missing'}; nvdisasm ${t.nvdisasm?.path ?? 'missing'}; cuobjdump ${t.cuobjdump?.path ?? 'missing'}; ncu ${t.ncu?.path ?? 'missing'}; GPUs: ${t.gpus.map(g => `${g.name} (${g.arch})`).join(', ') || 'none'}`,
          );
          this.sendStatus(null);
        },
        e => {
          if (this.surveyed !== surveyed) return;
          this.surveys++;
          this.problem = `cannot detect the CUDA toolchain: ${e}`;
          this.log(this.problem);
          this.sendStatus(null);
        },
      );
    }
    return this.surveyed;
  }

  /**
   * The toolchain at a glance and each walkthrough check, from the cached survey (`recheck`: look
   * for the tools again first, as a check button asks). Runs nothing in an untrusted workspace.
   */
  async info(recheck = false): Promise<ToolchainInfo> {
    if (!this.trustedNow)
      return unavailableToolchainInfo({ trusted: false, text: 'Restricted Mode', reason: RESTRICTED_MODE, fix: TRUST_FIX });
    if (recheck) this.reset();
    let s: ToolSurvey;
    try {
      s = await this.survey();
    } catch (e) {
      const reason = `cannot detect the CUDA toolchain: ${e instanceof Error ? e.message : e}`;
      return unavailableToolchainInfo({
        trusted: true,
        text: 'no toolchain',
        reason,
        fix: 'See the server log (Unroll Lens: Show server log).',
      });
    }
    const permission = probeCounterPermission(s.gpus[0]?.driverVersion ?? null);
    return toolchainInfo(s, permission, this.settings(), this.archFor(s, null));
  }

  /**
   * The toolchain with nvcc and the disassemblers held to the settings' time limits
   * (unrollLens.toolchain.nvccTimeoutSeconds, disassemblerTimeoutSeconds), whoever builds with it:
   * variants, benchmarks and sweeps. A run past its limit is killed, and the log and a warning
   * say which tool timed out after how long on which file, and which setting raises it.
   */
  limited(t: Toolchain, file?: string): Toolchain {
    const s = this.settings().toolchain;
    const nvccMs = s.nvccTimeoutSeconds * 1000;
    const disasmMs = s.disassemblerTimeoutSeconds * 1000;
    const table = new Map<string, { tool: string; timeoutMs: number }>([[t.nvcc.path, { tool: 'nvcc', timeoutMs: nvccMs }]]);
    if (t.nvdisasm) table.set(t.nvdisasm.path, { tool: 'nvdisasm', timeoutMs: disasmMs });
    if (t.cuobjdump) table.set(t.cuobjdump.path, { tool: 'cuobjdump', timeoutMs: disasmMs });
    const runner = withToolTimeouts(t.runner, table, x => this.timedOut(x, file));
    return { ...t, runner };
  }

  private timedOut(x: ToolTimeout, source: string | undefined): void {
    const file = source ? path.basename(source) : x.file ? path.basename(x.file) : 'a build';
    const msg =
      x.tool === 'nvcc'
        ? `nvcc timed out after ${x.seconds} s compiling ${file} and was killed; raise unrollLens.toolchain.nvccTimeoutSeconds if it needs longer`
        : `${x.tool} timed out after ${x.seconds} s disassembling the SASS of ${file} and was killed; its counts come from the cubin alone; ` +
          'raise unrollLens.toolchain.disassemblerTimeoutSeconds if it needs longer';
    this.log(msg);
    void this.connection.window?.showWarningMessage(`Unroll Lens: ${msg}`);
  }

  /** Status bar: the toolchain found (or why not) and what is being built, if anything. */
  sendStatus(building: string | null): void {
    void this.surveyed?.then(
      t => {
        const summary = t.nvcc ? toolchainSummary(t, this.archFor(t, null)) : null;
        const status: ToolchainStatus = { summary, problem: this.problem, building, survey: this.surveys };
        this.connection.sendNotification(ToolchainStatusNotification, status);
      },
      () => {
        const status: ToolchainStatus = { summary: null, problem: this.problem, building, survey: this.surveys };
        this.connection.sendNotification(ToolchainStatusNotification, status);
      },
    );
  }

  /**
   * The unrollLens.arch setting, else the file's flags, else the GPU, else sm_90. The setting is
   * read as the flags read it (normaliseArch): a value they log as "ignored" is ignored here too.
   */
  archFor(t: Pick<Toolchain, 'gpus'>, fromFlags: string | null): string {
    return chooseArch(normaliseArch(this.settings().arch), fromFlags, t.gpus).arch;
  }

  /** The workspace folders (where headers no flags name are looked for last). */
  folders(): string[] {
    return this.workspaceRoots();
  }

  /** compile_commands.json for the file, else the settings' flags. */
  flagsFor(file: string): CompileFlags {
    const s = this.settings();
    const flags = resolveCompileFlags(file, this.workspaceRoots(), {
      nvccArgs: s.nvccArgs,
      includePaths: s.includePaths,
      defines: s.defines,
      arch: s.arch || null,
      compileCommands: s.compileCommands ? path.resolve(this.workspaceRoots()[0] ?? '.', s.compileCommands) : null,
    });
    this.log(`${path.basename(file)}: ${flagsOriginText(flags, file)}`);
    for (const w of flags.warnings) this.log(`${path.basename(file)}: ${w}`);
    return flags;
  }

  /**
   * One request's compiler or GPU work: $/progress on the client's workDoneToken, cancellation
   * from the request's token, and `building` in the status bar until it ends.
   */
  async runRequest<T>(
    work: { title: string; message: string; building: string; token: CancellationToken; workDoneToken: ProgressToken | undefined },
    run: (signal: AbortSignal, report: (percentage: number, message: string) => void) => Promise<T>,
  ): Promise<T> {
    const ac = new AbortController();
    work.token.onCancellationRequested(() => ac.abort());
    const progress = this.connection.window.attachWorkDoneProgress(work.workDoneToken);
    progress.begin(work.title, 0, work.message, true);
    this.sendStatus(work.building);
    try {
      return await run(ac.signal, (percentage, message) => progress.report(percentage, message));
    } finally {
      progress.done();
      this.sendStatus(null);
    }
  }
}
