import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import tsdoc from 'eslint-plugin-tsdoc';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'bench-results/'] },
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
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
