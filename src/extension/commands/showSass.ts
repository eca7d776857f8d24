// "Show SASS" (CodeLens, the loop hover's link, the palette): opens the read-only listing of one
// variant's kernel. From the palette: the loop under the cursor (else a pick), then a factor.
import * as vscode from 'vscode';
import { DEFAULT_SETTINGS, ShowSassArgs } from '../../protocol';
import { validFactorTexts } from '../../schema/ranges';
import { factorChoices, factorLabel } from '../sassTarget';
import type { CommandFactory } from './context';
import { pickLoop } from './pick';

/** The unroll factors to offer: as written, then the unrollLens.unrollFactors setting. */
function configuredFactors(): string[] {
  // Invalid entries are dropped here (the server reports them as settings warnings): never offered, never built;
  // none left: the default list, as the server reads it.
  const valid = validFactorTexts(vscode.workspace.getConfiguration('unrollLens').get<unknown>('unrollFactors'), () => undefined);
  return factorChoices(valid.length ? valid : DEFAULT_SETTINGS.unrollFactors);
}

/** A factor picked by the user (undefined: they dismissed the pick). */
export async function pickFactor(placeHolder: string, exclude?: string): Promise<string | undefined> {
  const items = configuredFactors()
    .filter(f => f !== exclude)
    .map(f => ({
      label: factorLabel(f),
      description: f === 'as-written' ? 'the file as it is' : f === 'default' ? 'no pragma: nvcc decides' : undefined,
      factor: f,
    }));
  return (await vscode.window.showQuickPick(items, { placeHolder }))?.factor;
}

export const showSass: CommandFactory =
  ({ client, sass }) =>
  async (args?: ShowSassArgs) => {
    let target: ShowSassArgs | undefined = args;
    if (!target) {
      const loop = await pickLoop(client);
      if (!loop) return undefined;
      const factor = await pickFactor(`SASS of the loop at line ${loop.line}: which unroll factor?`);
      if (!factor) return undefined;
      target = { uri: loop.uri, line: loop.line, factor };
    }
    const factor = target.factor && target.factor !== 'as-written' ? target.factor : undefined;
    const editor = await sass.open(
      { uri: target.uri, line: target.line, factor, arch: target.arch },
      { viewColumn: vscode.ViewColumn.Beside },
    );
    return editor?.document.uri.toString();
  };
