/**
 * Loads the tools of a user's module for `durable-agent worker --tools-module <file>` (or
 * DURABLE_AGENT_TOOLS_MODULE), so a CLI user adds a tool without writing a worker. The module
 * exports its tools (made with `defineTool`): as its default export (one tool or a list), or as
 * named exports (tools, or lists of tools). TypeScript modules load through tsx.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Tool } from '../activities/own-tools/define';
import { checkToolSet } from '../activities/own-tools/define';
import { ConfigError } from './config-error';

function isTool(value: unknown): value is Tool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { run?: unknown }).run === 'function' &&
    typeof (value as { spec?: { name?: unknown } }).spec?.name === 'string'
  );
}

/** The tools among a module's exports, in the order they are exported, each once. */
function toolsOf(exports: Record<string, unknown>): Tool[] {
  const found = new Set<Tool>();
  const take = (value: unknown) => {
    if (isTool(value)) found.add(value);
    else if (Array.isArray(value)) for (const v of value) if (isTool(v)) found.add(v);
  };
  take(exports.default);
  for (const [name, value] of Object.entries(exports)) if (name !== 'default') take(value);
  return [...found];
}

/**
 * Requires a module. TypeScript loads as it is where the process already compiles it (the CLI runs
 * through tsx, tests through jest), and through tsx's loader where it does not (the built package).
 */
function load(file: string): Record<string, unknown> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the user's module, named at run time
    return require(file) as Record<string, unknown>;
  } catch (err) {
    const untranspiled =
      /\.[cm]?tsx?$/.test(file) &&
      (err instanceof SyntaxError || (err as { code?: unknown }).code === 'ERR_UNKNOWN_FILE_EXTENSION');
    if (!untranspiled) throw err;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- tsx's loader, only for TypeScript modules
  const { require: tsxRequire } = require('tsx/cjs/api') as {
    require: (id: string, from: string) => Record<string, unknown>;
  };
  return tsxRequire(file, __filename);
}

/** The tools a module exports; a missing file, a module that fails to load or exports none fails naming it. */
export function loadToolsModule(file: string): Tool[] {
  const abs = path.resolve(file);
  if (!fs.existsSync(abs)) throw new ConfigError(`Tools module ${abs} does not exist`);
  let exports: Record<string, unknown>;
  try {
    exports = load(abs);
  } catch (err) {
    throw new ConfigError(`Tools module ${abs} failed to load: ${(err as Error).message}`);
  }
  const tools = toolsOf(exports);
  if (tools.length === 0) {
    throw new ConfigError(
      `Tools module ${abs} exports no tools: export the results of defineTool(), as named exports or a default list`,
    );
  }
  try {
    return checkToolSet(tools);
  } catch (err) {
    throw new ConfigError(`Tools module ${abs}: ${(err as Error).message}`);
  }
}
