import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import tsdoc from 'eslint-plugin-tsdoc';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'out/',
      'coverage/',
      'bench-results/',
      'playwright-report/',
      'test-results/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { tsdoc },
    rules: {
      'tsdoc/syntax': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'electron', message: 'src/ is plain Node: Electron belongs in electron/ only.' }] },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Buffer',
          property: 'allocUnsafe',
          message:
            'allocUnsafe may hand out pooled, uninitialised memory; use Buffer.alloc or secureBuffer().',
        },
        {
          object: 'Buffer',
          property: 'allocUnsafeSlow',
          message: 'Use Buffer.alloc or secureBuffer().',
        },
      ],
    },
  },
  // One door between the window and main: only electron/main/ipc.ts registers ipcMain handlers (each checks its
  // sender) and only the preload touches ipcRenderer. The import rule catches named imports, the syntax rule
  // `electron.ipcMain` through a namespace or default import.
  {
    files: ['electron/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', ipcImportRule(['ipcMain', 'ipcRenderer'])],
      'no-restricted-syntax': ['error', ipcAccessRule('ipcMain'), ipcAccessRule('ipcRenderer')],
    },
  },
  {
    files: ['electron/main/ipc.ts'],
    rules: {
      'no-restricted-imports': ['error', ipcImportRule(['ipcRenderer'])],
      'no-restricted-syntax': ['error', ipcAccessRule('ipcRenderer')],
    },
  },
  {
    files: ['electron/preload/index.ts'],
    rules: {
      'no-restricted-imports': ['error', ipcImportRule(['ipcMain'])],
      'no-restricted-syntax': ['error', ipcAccessRule('ipcMain')],
    },
  },
  // The renderer is browser code that shows attacker-chosen names: nothing of Node, the native addons, Electron
  // or the engine's runtime (types from the contract and the engine are fine).
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer reaches main only through window.coffer.' }],
          patterns: [
            {
              group: [
                'node:*',
                'better-sqlite3',
                'sodium-native',
                'libsodium-wrappers*',
                'ws',
                '**/core/**',
                '**/app/**',
              ],
              allowTypeImports: true,
              message: 'The renderer is browser code: it talks to the back end only through window.coffer.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);

/** Forbids importing these names from 'electron'. */
function ipcImportRule(names) {
  return {
    paths: [
      {
        name: 'electron',
        importNames: names,
        message:
          'Only electron/main/ipc.ts registers ipcMain handlers and only electron/preload/index.ts uses ipcRenderer.',
      },
    ],
  };
}

/** Forbids `x.ipcMain` / `x.ipcRenderer` member access. */
function ipcAccessRule(name) {
  return {
    selector: `MemberExpression[property.name='${name}']`,
    message: `Only ${name === 'ipcMain' ? 'electron/main/ipc.ts' : 'electron/preload/index.ts'} may use ${name}.`,
  };
}
