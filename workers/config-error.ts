/**
 * A configuration problem, naming the variable to fix. Apart from ./config so that what reads one
 * setting (the Temporal connection's, ./temporal-config) does not build every setting's schema.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
