/**
 * Text the model reads for the notify_user tool.
 *
 * Node-only (reads a file): import it from activities and the worker, never from workflow code,
 * which is sandboxed and cannot use `node:fs`. Workflows get the prompt text as data instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the model receives after a notification was sent. */
export const NOTIFY_USER_SUCCESS = 'The notification has been sent to the user.';

/**
 * Where the tool instructions may live: beside this module (source checkout, or a build that copies
 * `.md` files), else in the repository's `prompts/` when running compiled code from `dist/prompts/`.
 */
const CANDIDATE_PATHS = [
  join(__dirname, 'notify-user.md'),
  join(__dirname, '..', '..', 'prompts', 'notify-user.md'),
] as const;

/**
 * Reads the notify_user tool instructions (`prompts/notify-user.md`), without trailing whitespace.
 * Pass `path` to use another file. Throws when the file cannot be found or read.
 */
export function loadNotifyUserPrompt(path?: string): string {
  const file = path ?? CANDIDATE_PATHS.find((candidate) => existsSync(candidate)) ?? CANDIDATE_PATHS[0];
  return readFileSync(file, 'utf8').trimEnd();
}
