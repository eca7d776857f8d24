// Layer rules (CONTRIBUTING.md, "Layers"): `npm run lint` fails on a new back-arrow.
const wire = ['^src/(protocol|panelMessages|panelHtml|settings|settingsManifest)\\.ts$', '^src/(server|cli|extension)/', '^webview/'];
const editorPackages = '^(vscode|vscode-languageserver|vscode-languageserver-textdocument|vscode-languageclient|vscode-jsonrpc)(/|$)';
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle makes a stage impossible to test or reuse alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'engine-knows-no-wire',
      severity: 'error',
      comment: 'engine/ knows nothing of the wire, the settings, the server, the CLI or VS Code.',
      from: { path: '^src/engine/' },
      to: { path: wire },
    },
    { name: 'engine-no-editor-packages', severity: 'error', from: { path: '^src/engine/' }, to: { path: editorPackages } },
    {
      name: 'schema-is-a-leaf',
      severity: 'error',
      comment: 'src/schema (result contract, limits, statuses) is imported by every layer, so it imports none.',
      from: { path: '^src/schema/' },
      to: { pathNot: '^src/schema/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'client-talks-to-server-only',
      severity: 'error',
      comment: 'The extension client reaches the engine through server requests: its bundle holds no engine code.',
      from: { path: '^src/extension/' },
      to: { path: '^src/(engine|server|cli)/' },
    },
    {
      name: 'client-reaches-no-engine',
      severity: 'error',
      comment: 'Not even through a shared file (panelHtml.ts): test/unit/clientBundle.test.ts checks the built bundles too.',
      from: { path: '^(src/extension|webview)/' },
      to: { path: '^src/(engine|server|cli)/', reachable: true },
    },
    {
      name: 'webview-is-a-page',
      severity: 'error',
      comment: 'The panel page gets everything in messages.',
      from: { path: '^webview/' },
      to: { path: '^src/(engine|server|cli|extension)/' },
    },
    { name: 'server-not-client', severity: 'error', from: { path: '^src/server/' }, to: { path: '^src/(extension|cli)/' } },
    { name: 'cli-not-editor', severity: 'error', from: { path: '^src/cli/' }, to: { path: ['^src/(extension|server)/', editorPackages] } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(out|dist|node_modules)/' },
  },
};
