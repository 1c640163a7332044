// Flat ESLint config. Workflow code runs in Temporal's deterministic sandbox, so Node built-ins are banned there.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Floors, lowest first: a file may import its own floor and those below, never one above.
// shared/ and prompts/ → activities/ → workflows/ (activities' types only) → workers/ → client/ →
// lib/ (the package entries: nothing of ours imports them) → server/ → cli/; web/ (browser code)
// imports shared/ only. On top: testkit/ (fixtures that tests,
// benches and scripts share), then bench/, scripts/ and tests/. The product never imports
// examples/, and nothing but tests/ imports tests/.
const tools = ['testkit', 'bench', 'scripts', 'tests', 'examples'];
const above = {
  ground: ['activities', 'workflows', 'workers', 'client', 'lib', 'server', 'cli', 'web', ...tools],
  activities: ['workflows', 'workers', 'client', 'lib', 'server', 'cli', 'web', ...tools],
  workers: ['client', 'lib', 'server', 'cli', 'web', ...tools],
  client: ['lib', 'server', 'cli', 'web', ...tools],
  lib: ['server', 'cli', 'web', ...tools],
  server: ['lib', 'cli', ...tools],
  cli: ['lib', ...tools],
};
const zone = (target, from, message) => from.map((f) => ({ target, from: `./${f}`, message }));
const floors = [
  ...zone('./shared', above.ground, 'shared/ is the ground floor: it imports nothing of ours above it.'),
  ...zone('./prompts', above.ground, 'prompts/ is the ground floor: it imports nothing of ours above it.'),
  ...zone('./web', [...above.ground.filter((f) => f !== 'web')], 'web/ (browser code) imports shared/ only.'),
  ...zone(
    './activities',
    above.activities,
    'activities/ import shared/ only, never workers/, client/ or the doors.',
  ),
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
  ...zone(
    './workers',
    above.workers,
    'workers/ never import client/, the doors or the tools around the product.',
  ),
  ...zone('./client', above.client, 'client/ imports workers/ and below, never server/, cli/ or web/.'),
  ...zone(
    './lib',
    above.lib,
    'lib/ (the package entries) re-exports the library floors only, never the doors or the tools around the product.',
  ),
  ...zone(
    './server',
    above.server,
    'server/ (HTTP API, web assets, codec server) never imports cli/ or lib/.',
  ),
  ...zone('./cli', above.cli, 'cli/ (commands) never imports the fixtures, benches, scripts or tests.'),
  ...zone('./cli', ['activities'], 'cli/ holds commands only: it reaches the tools’ code through client/.'),
  ...zone(
    './testkit',
    ['bench', 'scripts', 'tests'],
    'testkit/ holds shared fixtures: it imports the product only.',
  ),
  ...zone('./bench', ['tests', 'scripts'], 'bench/ takes shared fixtures from testkit/, never from tests/.'),
  ...zone('./scripts', ['tests', 'bench'], 'scripts/ take shared fixtures from testkit/, never from tests/.'),
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      '.temporal/**',
      '.data/**',
      'coverage/**',
      '**/*.js',
      '**/*.mjs',
      // An app of its own, with its own tsconfig, built against the packed package by its test.
      'examples/own-app/**',
    ],
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
    files: ['tests/**/*.ts', 'bench/**/*.ts', 'testkit/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
