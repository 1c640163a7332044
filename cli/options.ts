/**
 * Parsers of command-line option values shared by several commands. Light on purpose: commands are
 * registered (and `--help` answers) without loading what they run.
 */
import { InvalidArgumentError } from 'commander';

/** A whole number ≥ 1 from a command-line option. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return n;
}

/** A number > 0 from a command-line option. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

/** `--id`: any non-empty text (its characters are checked with the run's other input). */
export function workflowIdOption(value: string): string {
  if (!value.trim()) throw new InvalidArgumentError('must not be empty (leave --id out for agent-<uuid>)');
  return value;
}

/** Where `durable-agent api` serves the HTTP API and the web UI unless told otherwise. */
export const DEFAULT_API_HOST = '127.0.0.1';
/** The port `durable-agent api` listens on unless told otherwise. */
export const DEFAULT_API_PORT = 8787;
/** The web UI's address when `durable-agent api` runs with its defaults: run pages link there. */
export const DEFAULT_API_URL = `http://${DEFAULT_API_HOST}:${DEFAULT_API_PORT}`;
