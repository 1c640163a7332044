import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { loadClientConfig, loadClientConnectConfig } from '@temporalio/envconfig';
import { ConfigError } from './config-error';

/**
 * Where Temporal's tools look for their TOML file when TEMPORAL_CONFIG_FILE is unset: the user
 * config folder's `temporalio/temporal.toml` (the rule `@temporalio/envconfig` follows).
 */
export function defaultTemporalConfigFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  let dir: string | undefined;
  if (os.platform() === 'win32') dir = env.APPDATA;
  else if (os.platform() === 'darwin')
    dir = env.HOME && path.join(env.HOME, 'Library', 'Application Support');
  else if (env.XDG_CONFIG_HOME) dir = path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  else dir = env.HOME && path.join(env.HOME, '.config');
  return dir ? path.join(dir, 'temporalio', 'temporal.toml') : undefined;
}

/**
 * Temporal's client settings from its TOML profiles and TEMPORAL_* variables, as every Temporal
 * tool reads them. Unlike the library, a problem names the file read (or says none was found) and
 * the profiles it holds: a TEMPORAL_CONFIG_FILE that does not exist, a TEMPORAL_PROFILE the file
 * lacks, a file that does not parse.
 */
export function loadTemporalConnectConfig(env: NodeJS.ProcessEnv = process.env): ClientConnectConfig {
  const vars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  const explicit = env.TEMPORAL_CONFIG_FILE?.trim() || undefined;
  const file = explicit ?? defaultTemporalConfigFile(env);
  const profile = env.TEMPORAL_PROFILE?.trim() || undefined;
  const data = file === undefined ? undefined : readIfPresent(file, explicit !== undefined);
  if (data === undefined) {
    if (profile) {
      throw new ConfigError(
        `TEMPORAL_PROFILE=${profile}, but no Temporal config file was found` +
          (file ? ` (looked for ${file})` : ' (HOME is not set, so there is no default file)') +
          '. Create the file, point TEMPORAL_CONFIG_FILE at one, or unset TEMPORAL_PROFILE.',
      );
    }
    return loadClientConnectConfig({ disableFile: true, overrideEnvVars: vars });
  }
  let profiles: string[];
  try {
    profiles = Object.keys(loadClientConfig({ configSource: { data } }).profiles);
  } catch (err) {
    throw new ConfigError(`Temporal config file ${file}: ${(err as Error).message}`);
  }
  if (profile && !profiles.includes(profile)) {
    throw new ConfigError(
      `TEMPORAL_PROFILE=${profile}: no such profile in ${file} ` +
        (profiles.length ? `(its profiles: ${profiles.join(', ')})` : '(it defines no profiles)') +
        '. Set TEMPORAL_PROFILE to one of them, or add a [profile.' +
        `${profile}] table.`,
    );
  }
  try {
    return loadClientConnectConfig({ configSource: { data }, overrideEnvVars: vars, profile });
  } catch (err) {
    throw new ConfigError(
      `Temporal config file ${file}, profile ${profile ?? 'default'}: ${(err as Error).message}`,
    );
  }
}

/** The file's text; undefined when it does not exist and was not named explicitly. */
function readIfPresent(file: string, named: boolean): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !named) return undefined;
    if (code === 'ENOENT') {
      throw new ConfigError(
        `TEMPORAL_CONFIG_FILE=${file}: no such file. Fix the path, or unset TEMPORAL_CONFIG_FILE ` +
          'to use the default file or the TEMPORAL_* variables alone.',
      );
    }
    throw new ConfigError(`Cannot read the Temporal config file ${file}: ${(err as Error).message}`);
  }
}
