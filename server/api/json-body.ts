import type { Context } from 'hono';
import type { z } from 'zod';
import { formatZodIssues } from '../../shared/zod-issues';

/** The JSON body parsed by `schema` (an empty body is `{}`), or a 400 saying what is wrong. */
export async function jsonBody<T>(
  c: Context,
  schema: z.ZodType<T>,
): Promise<{ ok: true; value: T } | { ok: false; res: Response }> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim()) {
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, res: c.json({ error: 'body must be JSON (Content-Type: application/json)' }, 400) };
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { ok: false, res: c.json({ error: formatZodIssues(parsed.error) }, 400) };
  return { ok: true, value: parsed.data };
}
