// What package.json and docs/settings.md say about settings, generated from the one
// declaration in ./settings. `npm run gen:settings` writes them (scripts/gen-settings.mjs);
// test/unit/settingsManifest.test.ts fails when a file differs from what this module generates.
// Pure string and object work: callers read and write the files.
import { SECTION, SettingDecl, SETTING_ENTRIES, describeValue } from './settings';

/** JSON schema of one setting, as VS Code reads it from contributes.configuration. */
function schema(d: SettingDecl): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  switch (d.type) {
    case 'boolean':
      Object.assign(s, { type: 'boolean', default: d.default });
      break;
    case 'integer':
    case 'number':
      Object.assign(s, { type: d.type, default: d.default, minimum: d.minimum, maximum: d.maximum });
      break;
    case 'string':
      Object.assign(s, { type: 'string', default: d.default, pattern: d.pattern, patternErrorMessage: d.patternErrorMessage });
      break;
    case 'enum':
      Object.assign(s, {
        type: 'string',
        enum: [...d.values],
        enumDescriptions: d.valueDescriptions && [...d.valueDescriptions],
        default: d.default,
      });
      break;
    case 'strings':
      Object.assign(s, {
        type: 'array',
        items: { type: 'string', pattern: d.itemPattern, patternErrorMessage: d.itemPatternErrorMessage },
        minItems: d.minItems,
        default: [...d.default],
      });
      break;
  }
  Object.assign(s, { scope: d.scope ?? 'window', description: d.description });
  return JSON.parse(JSON.stringify(s)); // drops the undefined fields
}

/** package.json `contributes.configuration`. */
export function configurationContribution(): { title: string; properties: Record<string, unknown> } {
  return { title: 'Unroll Lens', properties: Object.fromEntries(SETTING_ENTRIES.map(e => [e.key, schema(e.decl)])) };
}

function restrictedSettings(): string[] {
  return SETTING_ENTRIES.filter(e => e.decl.restricted).map(e => e.key);
}

/** package.json `capabilities.untrustedWorkspaces`. */
export function untrustedWorkspacesCapability() {
  return {
    supported: 'limited' as const,
    description:
      'In an untrusted workspace, workspace values of the settings that name a program, a command or compiler input ' +
      '(tool paths, nvcc arguments, include paths, defines, benchmark commands and arguments) are ignored.',
    restrictedConfigurations: restrictedSettings(),
  };
}

/**
 * package.json with its generated parts replaced; everything else is kept as it is, in its order.
 * `capabilities` goes in front of `contributes` when the file has none yet.
 */
export function generatePackageJson(text: string): string {
  const pkg = JSON.parse(text) as Record<string, unknown>;
  const contributes = { ...(pkg.contributes as Record<string, unknown> | undefined), configuration: configurationContribution() };
  const capabilities = {
    ...(pkg.capabilities as Record<string, unknown> | undefined),
    untrustedWorkspaces: untrustedWorkspacesCapability(),
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(pkg)) {
    if (k === 'contributes' && !('capabilities' in pkg)) out.capabilities = capabilities;
    out[k] = k === 'contributes' ? contributes : k === 'capabilities' ? capabilities : v;
  }
  if (!('contributes' in out)) Object.assign(out, { capabilities, contributes });
  return JSON.stringify(out, null, 2) + '\n';
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function code(s: string): string {
  return '`' + s + '`';
}

function defaultText(d: SettingDecl): string {
  return code(JSON.stringify(d.default).replace(/","/g, '", "'));
}

function typeText(d: SettingDecl): string {
  switch (d.type) {
    case 'boolean':
      return 'boolean';
    case 'integer':
    case 'number':
      return describeValue(d).replace(/^an? /, '');
    case 'string':
      return d.pattern ? `string: ${d.patternErrorMessage}` : 'string';
    case 'enum':
      return d.values.map(code).join(' | ');
    case 'strings':
      return `string[]${d.itemPatternErrorMessage ? `: each ${d.itemPatternErrorMessage}` : ''}${d.minItems ? `, at least ${d.minItems}` : ''}`;
  }
}

const NOTICE = '<!-- Generated from src/settings.ts by `npm run gen:settings`; edit the declaration there, not this table. -->';

/** docs/settings.md. */
export function settingsMarkdown(): string {
  const rows = SETTING_ENTRIES.map(
    e =>
      `| ${code(e.key)} | ${cell(typeText(e.decl))} | ${defaultText(e.decl)} | ${cell(e.decl.description)} | ` +
      `${e.decl.restricted ? 'yes' : ''} |`,
  );
  return [
    '# Settings',
    '',
    NOTICE,
    '',
    `Every setting of Unroll Lens, under \`${SECTION}.\` in VS Code's settings. A value of the wrong type, out of range or not`,
    'among the allowed ones is replaced by its default, and the *Unroll Lens* output channel names the setting.',
    '',
    "*Restricted*: the setting names a program, a command or compiler input. In an untrusted workspace (VS Code's",
    'Restricted Mode) VS Code ignores its workspace value and uses your user settings. Tool paths are',
    '`machine-overridable`: a remote machine can have its own.',
    '',
    '| Setting | Type | Default | Description | Restricted in untrusted workspaces |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
