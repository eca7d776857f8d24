// SASS listings in a real VS Code: the unroll-lens-sass: document of a loop's variant, navigation
// both ways between it and the source, and the diff editor on two variants. Needs nvcc (no GPU).
import * as assert from 'assert';
import * as vscode from 'vscode';

const EXTENSION_ID = 'unroll-lens.unroll-lens';
const SASS_SCHEME = 'unroll-lens-sass';

function sample(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (expected <repo>/cuda-samples)');
  return vscode.Uri.joinPath(folder.uri, name);
}

/** 0-based line of the first line matching `re`. */
function findLine(doc: vscode.TextDocument, re: RegExp): number {
  for (let i = 0; i < doc.lineCount; i++) if (re.test(doc.lineAt(i).text)) return i;
  return -1;
}

suite('SASS listings (extension host)', () => {
  let matmul: vscode.TextDocument;
  /** 1-based lines of matmul_basic's k loop and its body. */
  let loopLine: number;
  let bodyLine: number;
  let listing: vscode.Uri;

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} is not loaded`);
    await ext.activate();
    matmul = await vscode.workspace.openTextDocument(sample('matmul_unroll.cu'));
    await vscode.window.showTextDocument(matmul);
    loopLine = findLine(matmul, /^\s*for \(int k = 0; k < n; \+\+k\)/) + 1;
    bodyLine = findLine(matmul, /^\s*sum \+= A\[row \* n \+ k\] \* B\[k \* n \+ col\];/) + 1;
    assert.ok(loopLine > 0 && bodyLine === loopLine + 1, `matmul_basic k loop not found (${loopLine}, ${bodyLine})`);
  });

  test('every loop has a Show SASS CodeLens and its hover links to Show SASS', async function () {
    this.timeout(60_000);
    const start = Date.now();
    let lenses: vscode.CodeLens[] = [];
    while (Date.now() - start < 30_000) {
      lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', matmul.uri, 100)) ?? [];
      if (lenses.some(l => l.command?.command === 'unrollLens.showSass')) break;
      await new Promise(r => setTimeout(r, 250));
    }
    const show = lenses.find(l => l.command?.command === 'unrollLens.showSass' && l.command.arguments?.[0]?.line === loopLine);
    assert.ok(show, `no Show SASS lens for line ${loopLine}`);
    assert.strictEqual(show.command!.title, 'Show SASS');
    assert.deepStrictEqual(show.command!.arguments, [{ uri: matmul.uri.toString(), line: loopLine }]);
    const pos = new vscode.Position(loopLine - 1, matmul.lineAt(loopLine - 1).text.indexOf('for') + 1);
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', matmul.uri, pos);
    const contents = (hovers ?? []).flatMap(h => h.contents);
    const md = contents.map(c => (typeof c === 'string' ? c : c.value));
    // The client trusts the hover for the SASS commands only (no other command: link runs).
    const linked = contents.find(c => typeof c !== 'string' && c.value.includes('command:unrollLens.showSass')) as vscode.MarkdownString;
    assert.ok(linked, 'no markdown with the link');
    assert.deepStrictEqual(linked.isTrusted, { enabledCommands: ['unrollLens.showSass', 'unrollLens.compareVariants'] });
    assert.ok(
      // "[Show SASS](…)", or once the loop's variants are built "**Show SASS**: [as written](…) · [4](…)".
      md.some(t =>
        /\[Show SASS\]\(command:unrollLens\.showSass\?|\*\*Show SASS\*\*: \[as written\]\(command:unrollLens\.showSass\?/.test(t),
      ),
      `no Show SASS link in the hover: ${md.join('\n').slice(0, 500)}`,
    );
  });

  test('Show SASS opens a read-only unroll-lens-sass document with the kernel grouped by source line', async function () {
    this.timeout(240_000);
    const uri = await vscode.commands.executeCommand<string | undefined>('unrollLens.showSass', {
      uri: matmul.uri.toString(),
      line: loopLine,
      factor: '4',
    });
    assert.ok(uri, 'the command opened no listing (is nvcc on the PATH?)');
    listing = vscode.Uri.parse(uri!);
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor, 'no active editor after Show SASS');
    assert.strictEqual(editor.document.uri.toString(), listing.toString());
    assert.strictEqual(editor.document.uri.scheme, SASS_SCHEME);
    assert.strictEqual(editor.document.languageId, 'unroll-lens-sass');
    const text = editor.document.getText();
    assert.match(text, /^\/\/ Unroll Lens · SASS of matmul_basic/);
    assert.match(text, /\bFFMA\b/);
    assert.match(text, new RegExp(`// ── matmul_unroll\\.cu:${bodyLine} `));
    assert.match(text, /\/\/ ┌ A: loop ×4 main/);
    assert.match(editor.document.uri.path, /matmul_unroll\.cu line \d+ · unroll 4\.cusass$/);
  });

  test('from a SASS line to its source line: Go to Source Line, F12 and the highlight', async function () {
    this.timeout(60_000);
    const doc = await vscode.workspace.openTextDocument(listing);
    const editor = await vscode.window.showTextDocument(doc);
    const ffma = findLine(doc, /\bFFMA\b/);
    assert.ok(ffma >= 0, 'no FFMA in the listing');
    editor.selection = new vscode.Selection(ffma, 12, ffma, 12);
    // The source line is highlighted while the cursor is on its SASS (the matmul editor is open beside it).
    await vscode.window.showTextDocument(matmul, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    const api = vscode.extensions.getExtension(EXTENSION_ID)!.exports;
    const start = Date.now();
    while (api.sassHighlightedSource()?.line !== bodyLine && Date.now() - start < 5000) await new Promise(r => setTimeout(r, 100));
    assert.deepStrictEqual(api.sassHighlightedSource(), { uri: matmul.uri.toString(), line: bodyLine });
    const defs = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>(
      'vscode.executeDefinitionProvider',
      listing,
      new vscode.Position(ffma, 12),
    );
    const def = defs?.[0];
    assert.ok(def && 'uri' in def, `no definition for the FFMA line: ${JSON.stringify(defs)}`);
    assert.strictEqual(def.uri.toString(), matmul.uri.toString());
    assert.strictEqual(def.range.start.line, bodyLine - 1);
    const landed = await vscode.commands.executeCommand<{ uri: string; line: number } | undefined>('unrollLens.goToSourceLine');
    assert.deepStrictEqual(landed, { uri: matmul.uri.toString(), line: bodyLine });
    const active = vscode.window.activeTextEditor!;
    assert.strictEqual(active.document.uri.toString(), matmul.uri.toString());
    assert.strictEqual(active.selection.active.line, bodyLine - 1);
  });

  test("from a source line to its SASS: Show SASS of This Line selects the line's instructions", async function () {
    this.timeout(240_000);
    await vscode.window.showTextDocument(matmul);
    const r = await vscode.commands.executeCommand<{ listing: string; ranges: { from: number; to: number }[] } | undefined>(
      'unrollLens.showSassForLine',
      { uri: matmul.uri.toString(), line: bodyLine },
    );
    assert.ok(r && r.ranges.length > 0, `no SASS lines for source line ${bodyLine}: ${JSON.stringify(r)}`);
    const editor = vscode.window.activeTextEditor!;
    assert.strictEqual(editor.document.uri.scheme, SASS_SCHEME);
    assert.strictEqual(editor.selections.length, r!.ranges.length);
    // Every selected line is an instruction (or the header) of source line bodyLine.
    const selected = editor.document.getText(editor.selections[0]);
    assert.match(selected, /LDG|FFMA|IMAD/);
  });

  test('Compare variants opens the diff editor on two normalised listings (unroll 4 vs 8)', async function () {
    this.timeout(240_000);
    const r = await vscode.commands.executeCommand<{ left: string; right: string } | undefined>('unrollLens.compareVariants', {
      uri: matmul.uri.toString(),
      line: loopLine,
      left: { factor: '4' },
      right: { factor: '8' },
    });
    assert.ok(r, 'compareVariants opened nothing (is nvcc on the PATH?)');
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputTextDiff, `the active tab is not a diff: ${JSON.stringify(tab?.input)}`);
    const input = tab.input as vscode.TabInputTextDiff;
    assert.strictEqual(input.original.scheme, SASS_SCHEME);
    assert.strictEqual(input.modified.scheme, SASS_SCHEME);
    assert.match(input.original.query, /factor=4/);
    assert.match(input.modified.query, /factor=8/);
    assert.match(input.original.query, /normalise=1/);
    const left = await vscode.workspace.openTextDocument(input.original);
    const right = await vscode.workspace.openTextDocument(input.modified);
    assert.match(left.getText(), /loop ×4 main/);
    assert.match(right.getText(), /loop ×8 main/);
    assert.doesNotMatch(left.getText(), /\/\*[0-9a-f]{4}\*\//, 'a normalised listing has no addresses');
    assert.match(tab.label, /unroll 4 ↔ unroll 8/);
  });

  test('Compare variants across architectures, raw: sm_80 against sm_90 with addresses', async function () {
    this.timeout(240_000);
    const r = await vscode.commands.executeCommand<{ left: string; right: string } | undefined>('unrollLens.compareVariants', {
      uri: matmul.uri.toString(),
      line: loopLine,
      left: { arch: 'sm_80' },
      right: { arch: 'sm_90' },
      raw: true,
    });
    assert.ok(r, 'compareVariants opened nothing');
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(input instanceof vscode.TabInputTextDiff, 'the active tab is not a diff');
    assert.doesNotMatch(input.original.query, /normalise/);
    const left = (await vscode.workspace.openTextDocument(input.original)).getText();
    const right = (await vscode.workspace.openTextDocument(input.modified)).getText();
    assert.match(left.split('\n')[0], /· sm_80 ·/);
    assert.match(right.split('\n')[0], /· sm_90 ·/);
    assert.match(left, /\/\*0000\*\//, 'a raw listing keeps the address column');
  });

  test('saving the source rebuilds its open listing', async function () {
    this.timeout(240_000);
    const uri = await vscode.commands.executeCommand<string | undefined>('unrollLens.showSass', {
      uri: matmul.uri.toString(),
      line: loopLine,
    });
    assert.ok(uri, 'no listing');
    const listingDoc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri!));
    const before = listingDoc.getText();
    assert.doesNotMatch(before, /\bFMUL\b/);
    // Same line count, one more multiply in the body: the saved file's listing has an FMUL.
    const body = matmul.lineAt(bodyLine - 1);
    const original = body.text;
    const edit = new vscode.WorkspaceEdit();
    edit.replace(matmul.uri, body.range, original.replace('sum += A[', 'sum += 0.5f * A['));
    assert.ok(await vscode.workspace.applyEdit(edit));
    try {
      assert.ok(await matmul.save(), 'the edited sample did not save');
      const start = Date.now();
      while (!/\bFMUL\b/.test(listingDoc.getText()) && Date.now() - start < 120_000) await new Promise(r => setTimeout(r, 250));
      assert.match(listingDoc.getText(), /\bFMUL\b/, 'the open listing was not rebuilt after the save');
      assert.match(listingDoc.getText(), /sum \+= 0\.5f \* A\[/);
    } finally {
      const undo = new vscode.WorkspaceEdit();
      undo.replace(matmul.uri, matmul.lineAt(bodyLine - 1).range, original);
      await vscode.workspace.applyEdit(undo);
      await matmul.save();
    }
  });

  test('a listing that cannot be built opens with the reason (a restored tab, a hand-made URI)', async function () {
    this.timeout(120_000);
    const query = new URLSearchParams({ uri: matmul.uri.toString(), line: String(loopLine), arch: 'sm_1' }).toString();
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: SASS_SCHEME, path: '/bad arch.cusass', query }));
    assert.match(doc.getText(), /^\/\/ Unroll Lens: no SASS listing: /);
    const bad = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: SASS_SCHEME, path: '/no query.cusass' }));
    assert.match(bad.getText(), /not an Unroll Lens SASS listing/);
  });
});
