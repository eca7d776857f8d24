// "Choose Translation Unit for Header": a header has no SASS of its own, so its loops are built
// through a .cu file that includes it. The server lists the candidates (compile_commands.json
// entries, then .cu files of the workspace whose text includes the header); the choice is
// remembered in the workspace's state (not a setting: the repository cannot name it) and sent to
// the server, which builds the header through it from then on.
import * as path from 'path';
import * as vscode from 'vscode';
import { SetTranslationUnitNotification, TranslationUnitsRequest } from '../../protocol';
import type { CommandFactory } from './context';

/** workspaceState key: header path → unit path. */
const TRANSLATION_UNITS_KEY = 'unrollLens.translationUnits';

export function rememberedUnits(state: vscode.Memento): Record<string, string> {
  const v = state.get<unknown>(TRANSLATION_UNITS_KEY);
  if (!v || typeof v !== 'object') return {};
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export const chooseTranslationUnit: CommandFactory =
  ({ client, output, state }) =>
  async (args?: { uri: string; unit?: string }) => {
    const uri = args?.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      void vscode.window.showWarningMessage('Unroll Lens: open a header first.');
      return undefined;
    }
    try {
      const r = await client.sendRequest(TranslationUnitsRequest, { uri });
      let unit: string | null | undefined = args?.unit;
      if (unit === undefined) {
        const rel = (p: string) => vscode.workspace.asRelativePath(p);
        type Item = vscode.QuickPickItem & { unit: string | null | 'browse' };
        const items: Item[] = r.candidates.map(c => ({
          label: rel(c.path),
          description: `${c.via === 'compile_commands' ? 'compile_commands.json' : 'includes it'}${c.exact ? '' : ' (same file name)'}${c.path === r.current ? ' · current' : ''}`,
          unit: c.path,
        }));
        items.push({ label: 'Other .cu file…', unit: 'browse' });
        if (r.currentVia === 'chosen') items.push({ label: 'Forget my choice', description: 'use compile_commands.json', unit: null });
        const pick = await vscode.window.showQuickPick(items, {
          title: `Translation unit for ${path.basename(r.header)}`,
          placeHolder: r.candidates.length
            ? 'The .cu file to build this header’s loops through (it must include the header)'
            : 'No .cu file in the workspace includes this header',
        });
        if (!pick) return undefined;
        unit = pick.unit;
        if (unit === 'browse') {
          const files = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { CUDA: ['cu'] }, title: 'Translation unit' });
          if (!files?.length) return undefined;
          unit = files[0].fsPath;
        }
      }
      const remembered = rememberedUnits(state);
      if (unit) remembered[r.header] = unit;
      else delete remembered[r.header];
      await state.update(TRANSLATION_UNITS_KEY, remembered);
      await client.sendNotification(SetTranslationUnitNotification, { header: r.header, unit: unit ?? null });
      output.appendLine(`translation unit for ${r.header}: ${unit ?? 'compile_commands.json'}`);
      return unit ?? null;
    } catch (e) {
      void vscode.window.showErrorMessage(`Unroll Lens: ${e instanceof Error ? e.message : e}`);
      return undefined;
    }
  };
