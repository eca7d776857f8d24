// Layer rules (CONTRIBUTING.md, "Layers"): `npm run lint` fails on a new back-arrow.
const wire = ['^src/(protocol|panelMessages|panelHtml|settings|settingsManifest)\\.ts$', '^src/(server|cli|extension)/', '^webview/'];
// The engine's folders, lowest first (docs/architecture.md): a folder imports only the folders
// before it, so no two folders import each other, even through a third. The front door
// (src/engine/index.ts) stands above them all.
const engineLayers = ['base', 'toolchain', 'parse', 'sass', 'occupancy', 'profile', 'variants', 'icache', 'gpu', 'sweep', 'report'];
const layerRules = engineLayers.map((layer, i) => ({
  name: `engine-layer-${layer}`,
  severity: 'error',
  comment: `engine/${layer}/ imports only the engine folders below it: ${engineLayers.slice(0, i).join(', ') || 'none'}.`,
  from: { path: `^src/engine/${layer}/` },
  to: { path: [`^src/engine/(${[...engineLayers.slice(i + 1), 'index'].join('|')})(/|\\.ts$)`] },
}));
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
    ...layerRules,
    {
      name: 'front-door',
      severity: 'error',
      comment: 'The CLI and the language server reach the engine through its front door, src/engine/index.ts, only (docs/architecture.md).',
      from: { path: '^src/(cli|server)/' },
      to: { path: '^src/engine/', pathNot: '^src/engine/index\\.ts$' },
    },
    {
      name: 'engine-is-its-folders',
      severity: 'error',
      comment: 'Every engine file lives in one of the layer folders; only the front door (index.ts) stands at the root.',
      from: { path: '^src/' },
      to: { path: '^src/engine/[^/]+\\.ts$', pathNot: '^src/engine/index\\.ts$' },
    },
    {
      name: 'engine-folder-is-a-layer',
      severity: 'error',
      comment: 'A new engine folder takes its place in engineLayers (and docs/architecture.md) before anything imports it.',
      from: { path: '^src/engine/' },
      to: { path: '^src/engine/[^/]+/', pathNot: `^src/engine/(${engineLayers.join('|')})/` },
    },
    { name: 'cli-not-editor', severity: 'error', from: { path: '^src/cli/' }, to: { path: ['^src/(extension|server)/', editorPackages] } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(out|dist|node_modules)/' },
  },
};
