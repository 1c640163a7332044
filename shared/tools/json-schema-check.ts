/**
 * Tool arguments checked against a JSON Schema inside the workflow: the one check for every tool
 * whose schema reaches the workflow as JSON Schema (MCP tools; tools defined by library users,
 * whose zod schemas travel as JSON Schema; client-side tools). Pure and deterministic, and it runs
 * in Temporal's workflow sandbox: no Node built-ins, no `new Function` or `eval` (which is how ajv
 * compiles, and which the sandbox must not depend on), nothing kept between runs.
 *
 * Schemas are taken as servers and generators write them: drafts 04 to 2020-12, every `$ref` inside
 * the document (`#/properties/…`, `#/definitions/…`, `#/$defs/…`, anchors, nested and recursive),
 * every assertion including `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`,
 * `unevaluatedProperties`/`Items`, and patterns with Unicode escapes (`\p{L}`). What cannot be
 * checked is refused by {@link jsonSchemaProblems}, saying why: a schema that is not valid JSON
 * Schema, a `$ref` to a URL or another document, references that loop without reading the value,
 * a schema over `SIZE_BUDGETS.toolSchemaBytes`.
 *
 * Two deliberate liberties, both towards accepting what the tool's own server accepts (it checks
 * again): `format` is not asserted (the specification's default), and a `pattern` shaped to
 * backtrack catastrophically (`(a+)+`) is left to the server rather than run in a workflow task.
 */
import { schemaProblems } from './json-schema/problems';
import { SchemaValidator } from './json-schema/validate';
import type { SchemaIssue } from './json-schema/validate';

export type { SchemaIssue } from './json-schema/validate';

/** What a tool's argument check answers: the arguments to use, or the error the model reads. */
export type ArgsCheck = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * What keeps `schema` from being a tool's argument schema, one message each, naming where in the
 * schema and what is wrong (`properties.a: "$ref": "https://…" points outside the schema …`); empty
 * when it is usable. The messages do not say whose schema it is: callers do.
 */
export function jsonSchemaProblems(schema: unknown): string[] {
  return schemaProblems(schema);
}

/** Options of {@link jsonSchemaArgsChecker}. */
export interface ArgsCheckerOptions {
  /** The tool's name, which the error names (`Invalid arguments for read_file: …`). */
  name?: string;
}

/**
 * A check of tool arguments against `schema`, for use inside the workflow: build it once per tool
 * and run, and call it for every call. It answers the arguments unchanged (JSON Schema validates,
 * it does not transform: the server applies its own defaults) or an error for the model that names
 * each field and what to fix, e.g. `Invalid arguments for get-sum: a: expected number, got string
 * "one"; b: is required. Fix them and call the tool again.` A schema with problems gives a check
 * that refuses every call, saying why, rather than one that throws inside workflow code.
 */
export function jsonSchemaArgsChecker(
  schema: Record<string, unknown>,
  options: ArgsCheckerOptions = {},
): (args: unknown) => ArgsCheck {
  const of = options.name ? ` for ${options.name}` : '';
  const problems = jsonSchemaProblems(schema);
  if (problems.length > 0) {
    const error = `The tool${options.name ? ` ${options.name}` : ''} cannot be called: its argument schema cannot be checked (${problems.join('; ')}). Use another tool.`;
    return () => ({ ok: false, error });
  }
  const validator = new SchemaValidator(schema);
  return (args) => {
    const issues = validator.issues(args);
    return issues.length === 0
      ? { ok: true, value: args }
      : {
          ok: false,
          error: `Invalid arguments${of}: ${formatSchemaIssues(issues)}. Fix them and call the tool again.`,
        };
  };
}

/** Issues as one line each, `field: what to fix`, joined with `; `. */
export function formatSchemaIssues(issues: readonly SchemaIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}
