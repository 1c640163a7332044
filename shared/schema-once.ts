import { z } from 'zod';

/**
 * Each zod schema built once per JavaScript context and shared by every workflow in it.
 *
 * The workflow sandbox evaluates a workflow's modules once per workflow, so a schema declared at
 * module level is built again for each cached workflow (about 1 MB of zod objects per agent run).
 * The worker preloads this module (with zod) into the sandbox's shared context (see
 * WORKFLOW_BUNDLER_OPTIONS in workers/worker.ts): the schemas built through it are kept here and
 * handed to every workflow. Schemas hold no per-run state, so sharing them is safe; the SDK freezes
 * what preloaded modules export, which zod schemas do not survive, so they live in this module's
 * scope and are reached only through `schemaOnce`. Outside the sandbox this is a plain cache.
 */
const built = new Map<string, z.ZodType>();

// zod sets its defaults (English messages, the memoizer) in its config the first time it builds a
// schema; the sandbox freezes that config after preloading, so they are set here, first.
z.object({ value: z.unknown() });

/** The schema `build` makes, built the first time `key` is asked for in this context. */
export function schemaOnce<S extends z.ZodType>(key: string, build: () => S): S {
  const known = built.get(key);
  if (known) return known as S;
  const schema = build();
  if (!(schema instanceof z.ZodType)) throw new TypeError(`schemaOnce("${key}") must build a zod schema`);
  built.set(key, schema);
  return schema;
}
