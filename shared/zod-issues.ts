import type { z } from 'zod';

/**
 * Formats zod issues as `field: message; field: message`, naming each field so the caller can fix it.
 * A module of its own, importing zod's types only, so a command that formats an error it was handed
 * (the CLI's `--help` path among them) does not load zod.
 */
export function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      // A bad record key says only "Invalid key in record"; the key's own check says what to fix.
      const inner = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
      return `${issue.path.length ? issue.path.join('.') : '(input)'}: ${inner ? `bad name: ${inner}` : issue.message}`;
    })
    .join('; ');
}
