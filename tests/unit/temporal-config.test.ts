/**
 * Temporal's connection settings: a config problem names the file read (or that none was found)
 * and the profiles in it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../workers/config';
import { defaultTemporalConfigFile, loadTemporalConnectConfig } from '../../workers/temporal-config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-config-'));
const file = path.join(dir, 'temporal.toml');
fs.writeFileSync(
  file,
  '[profile.default]\naddress = "127.0.0.1:7233"\n\n[profile.staging]\naddress = "staging:7233"\nnamespace = "agents"\n',
);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a profile from the named file, with TEMPORAL_* variables on top', () => {
  const cfg = loadTemporalConnectConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' });
  expect(cfg.connectionOptions.address).toBe('staging:7233');
  expect(cfg.namespace).toBe('agents');
  const over = loadTemporalConnectConfig({
    TEMPORAL_CONFIG_FILE: file,
    TEMPORAL_PROFILE: 'staging',
    TEMPORAL_NAMESPACE: 'other',
  });
  expect(over.namespace).toBe('other');
});

test('no file and no profile: the variables alone', () => {
  const cfg = loadTemporalConnectConfig({ HOME: path.join(dir, 'nohome'), TEMPORAL_ADDRESS: 'h:1' });
  expect(cfg.connectionOptions.address).toBe('h:1');
});

test('a wrong profile names the file and lists its profiles', () => {
  const load = () => loadTemporalConnectConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'verify' });
  expect(load).toThrow(ConfigError);
  expect(load).toThrow(
    `TEMPORAL_PROFILE=verify: no such profile in ${file} (its profiles: default, staging)`,
  );
});

test('a TEMPORAL_CONFIG_FILE that does not exist is named, with or without a profile', () => {
  const missing = path.join(dir, 'missing.toml');
  for (const env of [
    { TEMPORAL_CONFIG_FILE: missing },
    { TEMPORAL_CONFIG_FILE: missing, TEMPORAL_PROFILE: 'verify' },
  ]) {
    expect(() => loadTemporalConnectConfig(env)).toThrow(`TEMPORAL_CONFIG_FILE=${missing}: no such file`);
  }
});

test('a profile without any config file says which file was looked for', () => {
  const home = path.join(dir, 'nohome');
  expect(() => loadTemporalConnectConfig({ HOME: home, TEMPORAL_PROFILE: 'verify' })).toThrow(
    `TEMPORAL_PROFILE=verify, but no Temporal config file was found (looked for ${defaultTemporalConfigFile({ HOME: home })})`,
  );
  expect(defaultTemporalConfigFile({ HOME: home })).toBe(
    path.join(home, '.config', 'temporalio', 'temporal.toml'),
  );
  expect(defaultTemporalConfigFile({ XDG_CONFIG_HOME: '/etc/xdg', HOME: home })).toBe(
    '/etc/xdg/temporalio/temporal.toml',
  );
});

test('a file that does not parse is named', () => {
  const bad = path.join(dir, 'bad.toml');
  fs.writeFileSync(bad, 'profile = [');
  expect(() => loadTemporalConnectConfig({ TEMPORAL_CONFIG_FILE: bad })).toThrow(
    `Temporal config file ${bad}:`,
  );
});
