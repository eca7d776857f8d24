// ESLint flat config: typescript-eslint's recommended rules for the extension, server, engine,
// CLI and tests; Prettier owns formatting (eslint-config-prettier turns the style rules off).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'out/**',
      'dist/**',
      'node_modules/**',
      '.tools/**',
      '.test-artifacts/**',
      '.vscode-test/**',
      'test/fixtures/**',
      '.device/**',
      '.gl/**',
      '.whl/**',
      'cuda-samples/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Unused names are errors, except deliberate placeholders (_x) and rest siblings.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Command callbacks receive arbitrary VS Code arguments.
      '@typescript-eslint/no-explicit-any': 'warn',
      // Labelled loops and `for (;;)` poll loops are intended.
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  // Small files and functions (CONTRIBUTING.md): split by meaning past 800 lines a file or 100 a
  // function, comments and blank lines counted. Data tables are the one exception (below).
  {
    files: ['src/**/*.ts', 'webview/src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 800, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  // Generated calibration data (npm run fit:icache) is a table, not code.
  { files: ['src/engine/icache/calibration.ts'], rules: { 'max-lines': 'off', 'max-lines-per-function': 'off' } },
  // bin/ is the CommonJS entry of the CLI (no build step of its own).
  { files: ['bin/**/*.js'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // The results panel runs in a browser (webview, Chromium tests evaluate code in the page).
  { files: ['webview/**', 'test/webview/**', 'test/ui/**'], languageOptions: { globals: { ...globals.browser, ...globals.node } } },
  prettier,
);
