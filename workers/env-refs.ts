/**
 * `${env:NAME}` references in the config file. Apart from ./config so that a command reading one
 * section (the `kb` commands read `search.knowledgeBase`) does not build every setting's schema.
 */
import { ConfigError } from './config-error';

/**
 * Replaces every `${env:NAME}` string with that variable, so secrets can stay in the environment
 * (or a secret store that fills it) while the file holds the structure.
 */
export function resolveEnvRefs(value: unknown, env: NodeJS.ProcessEnv, where: string): unknown {
  if (typeof value === 'string') {
    // Whole values (`"${env:DB_URL}"`) and parts of them (`"Bearer ${env:TOKEN}"`); `${cwd}` is the
    // worker's working directory, for programs (MCP servers) that resolve relative paths their own way.
    return value
      .replaceAll('${cwd}', process.cwd())
      .replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_ref, name: string) => {
        const v = env[name];
        if (v === undefined || v === '')
          throw new ConfigError(`${where}: environment variable ${name} is not set`);
        return v;
      });
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveEnvRefs(v, env, `${where}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, resolveEnvRefs(v, env, where ? `${where}.${k}` : k)]),
    );
  }
  return value;
}
