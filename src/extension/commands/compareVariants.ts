// "Compare SASS of Two Variants": VS Code's diff editor on two listings of one loop's kernel,
// two unroll factors or two archs, normalised by default (no addresses, registers and labels
// renumbered in order of use, no stall notes) so the real differences stand out; raw on request.
import * as vscode from 'vscode';
import { SassDocuments } from '../sassDocuments';
import { SassTarget, factorLabel } from '../sassTarget';
import type { CommandFactory } from './context';
import { pickLoop } from './pick';
import { pickFactor } from './showSass';

interface CompareVariantsArgs {
  uri: string;
  /** 1-based line of the loop keyword. */
  line: number;
  left: { factor?: string; arch?: string };
  right: { factor?: string; arch?: string };
  /** Raw listings (addresses and nvcc's register numbers); default: normalised. */
  raw?: boolean;
}

const ARCHS = ['sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90', 'sm_100', 'sm_120'];

async function pickArch(placeHolder: string, exclude?: string): Promise<string | undefined> {
  const config = vscode.workspace.getConfiguration('unrollLens');
  const configured = config.get<string>('arch') || undefined;
  // The user's own architectures first: the arch setting, then unrollLens.extraArchs.
  const extra = (config.get<string[]>('extraArchs') ?? []).filter(a => /^sm_\d+[a-z]?$/.test(a));
  const archs = [...new Set([...(configured ? [configured] : []), ...extra, ...ARCHS])].filter(a => a !== exclude);
  return (await vscode.window.showQuickPick(archs, { placeHolder })) ?? undefined;
}

async function askArgs(uri: string, line: number): Promise<CompareVariantsArgs | undefined> {
  const mode = await vscode.window.showQuickPick(
    [
      { label: 'Two unroll factors', description: 'same arch', mode: 'factors' as const },
      { label: 'Two architectures', description: 'the file as written, e.g. sm_80 vs sm_90', mode: 'archs' as const },
    ],
    { placeHolder: `Compare the SASS of the loop at line ${line}` },
  );
  if (!mode) return undefined;
  let left: CompareVariantsArgs['left'];
  let right: CompareVariantsArgs['right'];
  if (mode.mode === 'factors') {
    const a = await pickFactor('Left side: unroll factor');
    if (!a) return undefined;
    const b = await pickFactor(`Right side: unroll factor (left is ${factorLabel(a)})`, a);
    if (!b) return undefined;
    [left, right] = [{ factor: a }, { factor: b }];
  } else {
    const a = await pickArch('Left side: architecture');
    if (!a) return undefined;
    const b = await pickArch(`Right side: architecture (left is ${a})`, a);
    if (!b) return undefined;
    [left, right] = [{ arch: a }, { arch: b }];
  }
  const how = await vscode.window.showQuickPick(
    [
      { label: 'Normalised', description: 'no addresses; registers and labels renumbered in order of use', raw: false },
      { label: 'Raw', description: "addresses and nvcc's register numbers as disassembled", raw: true },
    ],
    { placeHolder: 'Listings to compare' },
  );
  if (!how) return undefined;
  return { uri, line, left, right, raw: how.raw };
}

export const compareVariants: CommandFactory =
  ({ client, sass }) =>
  async (given?: CompareVariantsArgs | { uri: string; line: number }) => {
    let args: CompareVariantsArgs | undefined;
    if (given && 'left' in given) args = given;
    else {
      const loop = given ?? (await pickLoop(client));
      if (!loop) return undefined;
      args = await askArgs(loop.uri, loop.line);
    }
    if (!args) return undefined;
    const side = (v: { factor?: string; arch?: string }): SassTarget => ({
      uri: args.uri,
      line: args.line,
      ...(v.factor && v.factor !== 'as-written' ? { factor: v.factor } : {}),
      ...(v.arch ? { arch: v.arch } : {}),
      ...(args.raw ? {} : { normalise: true }),
    });
    const left = SassDocuments.uriOf(side(args.left));
    const right = SassDocuments.uriOf(side(args.right));
    // Build both first (with progress) so a failed build is an error message, not a half-empty diff.
    if (!(await sass.fetch(left)) || !(await sass.fetch(right))) return undefined;
    const name = (v: { factor?: string; arch?: string }) => [factorLabel(v.factor), v.arch].filter(Boolean).join(' ');
    const title = `SASS line ${args.line}: ${name(args.left)} ↔ ${name(args.right)}${args.raw ? ' (raw)' : ''}`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: false });
    return { left: left.toString(), right: right.toString() };
  };
