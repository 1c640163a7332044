// Flat ESLint config. Workflow code runs in Temporal's deterministic sandbox, so Node built-ins are banned there.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Floors, lowest first: a file may import its own floor and those below, never one above.
// shared/ and prompts/ → activities/ → workflows/ (activities' types only) → workers/ → cli/ and the rest.
const above = {
  ground: ['activities', 'workflows', 'workers', 'cli', 'web', 'bench', 'scripts', 'tests'],
  activities: ['workflows', 'workers', 'cli', 'web', 'bench', 'scripts', 'tests'],
  workers: ['cli', 'web', 'bench', 'scripts', 'tests'],
};
const zone = (target, from, message) => from.map((f) => ({ target, from: `./${f}`, message }));
const floors = [
  ...zone('./shared', above.ground, 'shared/ is the ground floor: it imports nothing of ours above it.'),
  ...zone('./prompts', above.ground, 'prompts/ is the ground floor: it imports nothing of ours above it.'),
  ...zone('./web', [...above.ground.filter((f) => f !== 'web')], 'web/ (browser code) imports shared/ only.'),
  ...zone('./activities', above.activities, 'activities/ import shared/ only, never workers/ or cli/.'),
  ...zone(
    './workflows',
    above.workers,
    'workflows/ import shared/ and the activities’ types only (the sandbox runs no worker code).',
  ),
  {
    target: './workflows',
    from: './activities',
    except: ['./types.ts'],
    message: 'workflows/ take activities as types only (activities/types.ts).',
  },
  ...zone('./workers', above.workers, 'workers/ never import cli/ or the tools around the product.'),
];

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'dist/**', '.temporal/**', '.data/**', 'coverage/**', '**/*.js', '**/*.mjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { import: importPlugin },
    settings: {
      'import/resolver': { node: { extensions: ['.ts', '.js'] } },
      'import/ignore': ['node_modules'],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/require-await': 'off',
      'import/no-cycle': ['error', { ignoreExternal: true }],
      'import/no-restricted-paths': ['error', { zones: floors }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow code is sandboxed: no Node built-ins.',
          })),
        },
      ],
    },
  },
  {
    files: ['tests/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
