import { ApplicationFailure, patched } from '@temporalio/workflow';
import type { CheckedOutput, OutputSchema } from '../../shared/agent/output-schema';
import { checkOutput, formatOutputIssues } from '../../shared/agent/output-schema';

/**
 * Marks runs that declare `output` (structured output): their answers are validated in the
 * workflow and an invalid one gets repair turns. Only runs with `output` check the patch, so every
 * other run issues the same commands as before.
 */
export const STRUCTURED_OUTPUT_PATCH = 'structured-output';

/** The failure type of a run whose answers never matched its output schema. */
export const OUTPUT_VALIDATION_ERROR = 'OutputValidationError';

/** What the loop does with a final answer of a run with an output schema. */
export type OutputVerdict =
  | { kind: 'valid'; value: unknown }
  | { kind: 'repair'; message: string; issues: string }
  | { kind: 'failed'; failure: ApplicationFailure };

/**
 * The output contract of one run: validates each final answer against the schema (pure and
 * deterministic, so it never throws inside workflow code), asks for repairs up to the policy's
 * bound, then fails the run with a typed, non-retryable `OutputValidationError`.
 */
export class StructuredOutput {
  private constructor(
    readonly schema: OutputSchema,
    private readonly maxRepairs: number,
    private used: number,
  ) {}

  /** The contract of a run that declares `output` (checking the patch), else null. */
  static of(
    schema: OutputSchema | undefined,
    maxRepairs: number,
    carriedRepairs: number | undefined,
  ): StructuredOutput | null {
    if (schema === undefined || !patched(STRUCTURED_OUTPUT_PATCH)) return null;
    return new StructuredOutput(schema, maxRepairs, carriedRepairs ?? 0);
  }

  /** Repair turns taken so far (carried across continue-as-new). */
  get repairs(): number {
    return this.used;
  }

  /** Checks a final answer; an invalid one uses up a repair turn, or fails the run when none is left. */
  judge(answer: string | null): OutputVerdict {
    const checked: CheckedOutput = checkOutput(this.schema, answer);
    if (checked.ok) return { kind: 'valid', value: checked.value };
    const issues = formatOutputIssues(checked.issues);
    if (this.used >= this.maxRepairs) {
      const fields = [...new Set(checked.issues.map((i) => i.path))];
      return {
        kind: 'failed',
        failure: ApplicationFailure.create({
          type: OUTPUT_VALIDATION_ERROR,
          message: `The answer does not match the output schema after ${this.used} repair turn${this.used === 1 ? '' : 's'}: ${issues}`,
          nonRetryable: true,
          details: [{ fields, issues: checked.issues }],
        }),
      };
    }
    this.used += 1;
    return {
      kind: 'repair',
      issues,
      message:
        'Your answer does not match the required output schema:\n' +
        checked.issues.map((i) => `- ${i.path}: ${i.message}`).join('\n') +
        '\nAnswer again with only the JSON value, matching the schema exactly.',
    };
  }
}
