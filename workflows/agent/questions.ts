import { ApplicationFailure, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { Duration } from '@temporalio/common';
import {
  ANSWER_REFUSALS,
  ASK_USER_TOOL,
  DEFAULT_CLIENT_TOOL_INPUT,
  DEFAULT_QUESTION_TIMEOUT,
  QUESTION_LIMITS,
  answerQuestionUpdate,
  answerText,
  checkAnswer,
  doorNameProblem,
} from '../../shared/agent';
import type {
  AgentEvent,
  ClientToolSpec,
  OutputSchema,
  ParsedAgentInput,
  PendingQuestion,
  PendingToolCall,
  QuestionAnswer,
} from '../../shared/agent';
import type { ModelToolSpec } from '../../shared/model';
import { NotificationPriority } from '../../shared/notifications/schema';
import type { ValidNotificationInput } from '../../shared/notifications/schema';
import { cut } from '../../shared/approval-notice';
import {
  QUESTION_GROUP,
  QUESTION_NOTICE_BOUNDS,
  answerPreview,
  questionNoticeDetail,
} from '../../shared/question-notice';
import type { AskUserArgs } from '../../shared/tools/ask-user';
import type { ToolDefinition } from '../../shared/tools/define';
import { z } from 'zod';
import type { DrainState } from './approvals';
import { INTERRUPTED } from './approvals';
import type { CarriedCall } from './carried-state';

/** What questions need from the run: its input, events, notifications, and whether it stops. */
export interface QuestionHost {
  readonly input: ParsedAgentInput;
  emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void;
  setLastError(message: string): void;
  /** Called when calls start or stop waiting for input (status, search attributes, the wall clock). */
  questionsChanged(): void;
  /** A notification the run raises itself (also to the user's inbox). */
  raise(notification: ValidNotificationInput): Promise<void>;
  /** A budget ended the run while calls wait: waits end and the calls get this text. */
  stopping(): string | null;
}

interface QuestionWait {
  view: PendingQuestion;
  schema: OutputSchema | undefined;
  answer: { value: unknown; by?: string } | null;
  /** Set once the wait is over (timed out, stopped): a late answer is refused, never half-taken. */
  closed: boolean;
}

/** What a question's or client tool call's wait gives the model. */
export interface QuestionOutcome {
  content: string;
  isError: boolean;
}

/** Calls answered lately that a second answer is told about (bounded; not carried over continue-as-new). */
const REMEMBERED_ANSWERS = 200;

/**
 * Input from outside that is not an approval: questions to the user (`ask_user`) and calls of the
 * run's client-side tools. Each waits durably (a workflow wait with a timer, no activity) for the
 * `answerQuestion` update, whose validator checks the answer against the call's schema before it
 * enters history. A question notifies the user and the notification is updated in place when it
 * ends; a client tool's call is shown to clients in the `state` query.
 */
export class QuestionGate {
  private readonly waits = new Map<string, QuestionWait>();
  private readonly answered = new Map<string, string>();
  private readonly definitions = new Map<string, ToolDefinition>();

  constructor(
    private readonly host: QuestionHost,
    private readonly drain: DrainState,
  ) {}

  /** The `answerQuestion` update, validated: unknown, answered or invalid answers never enter history. */
  registerHandlers(): void {
    setHandler(
      answerQuestionUpdate,
      (a) => {
        const wait = this.waits.get(a.toolCallId);
        if (!wait) throw new Error('unreachable: the validator checks the tool call id');
        const checked = checkAnswer(wait.schema, a.answer);
        if (!checked.ok) throw new Error('unreachable: the validator checks the answer');
        wait.answer = { value: checked.value, ...(a.by ? { by: a.by } : {}) };
        this.remember(a.toolCallId, a.by ?? 'someone');
        return { toolCallId: a.toolCallId, answered: true as const };
      },
      { validator: (a: QuestionAnswer) => this.validate(a) },
    );
  }

  private validate(a: QuestionAnswer): void {
    if (typeof a?.toolCallId !== 'string' || !('answer' in a)) {
      throw refusal(
        ANSWER_REFUSALS.invalid,
        'Give { toolCallId: string, answer: <JSON value>, by?: string }',
      );
    }
    const by = doorNameProblem(a.by);
    if (by) throw refusal(ANSWER_REFUSALS.invalid, by);
    const wait = this.waits.get(a.toolCallId);
    const earlier = this.answered.get(a.toolCallId);
    if (earlier !== undefined || wait?.answer) {
      throw refusal(
        ANSWER_REFUSALS.alreadyAnswered,
        `${a.toolCallId} was already answered${earlier ? ` (from ${earlier})` : ''}; this answer was not taken`,
      );
    }
    if (!wait || wait.closed) {
      const waiting = [...this.waits.values()].filter((w) => !w.closed).map((w) => w.view.toolCallId);
      throw refusal(
        ANSWER_REFUSALS.notWaiting,
        `No question or client tool call ${a.toolCallId} waits for an answer` +
          (waiting.length ? `; waiting: ${waiting.join(', ')}` : '; none is waiting'),
      );
    }
    const checked = checkAnswer(wait.schema, a.answer);
    if (!checked.ok) {
      throw refusal(
        ANSWER_REFUSALS.invalid,
        `The answer to ${a.toolCallId} was refused: ${checked.error}. It still waits for an answer.`,
      );
    }
  }

  private remember(toolCallId: string, by: string): void {
    this.answered.set(toolCallId, by);
    if (this.answered.size > REMEMBERED_ANSWERS) {
      const oldest = this.answered.keys().next().value;
      if (oldest !== undefined) this.answered.delete(oldest);
    }
  }

  /** Whether the run declares a client-side tool of this name. */
  hasClientTool(name: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.host.input.clientTools ?? {}, name);
  }

  /** The client tools' names, for error messages. */
  clientToolNames(): string[] {
    return Object.keys(this.host.input.clientTools ?? {});
  }

  /** The client tools as the model sees them (empty without any). */
  modelTools(): ModelToolSpec[] {
    return Object.entries(this.host.input.clientTools ?? {}).map(([name, spec]) => ({
      name,
      description: spec.description,
      parameters: spec.input ?? DEFAULT_CLIENT_TOOL_INPUT,
    }));
  }

  /** A client tool as the tool runner handles every tool; its arguments are checked against its input schema. */
  definition(name: string): ToolDefinition | undefined {
    const spec = this.host.input.clientTools?.[name];
    if (!spec) return undefined;
    let def = this.definitions.get(name);
    if (!def) {
      const schema = spec.input ?? DEFAULT_CLIENT_TOOL_INPUT;
      def = {
        name,
        description: spec.description,
        description_zh: spec.description,
        category: 'client',
        sign: 'c',
        inputs: z.unknown(),
        output: 'the result the client submits',
        // Never scheduled: the client runs the tool and submits its result by update.
        activity: { startToCloseTimeout: '1 second' },
        checkArgs: (args) => {
          const checked = checkAnswer(schema, args);
          return checked.ok
            ? checked
            : {
                ok: false,
                error: `Invalid arguments for ${name}: ${checked.error.replace(/the answer/g, 'the arguments')}. Fix them and call the tool again.`,
              };
        },
      };
      this.definitions.set(name, def);
    }
    return def;
  }

  /** Calls waiting for input, for the `state` query. */
  pendingQuestions(): PendingQuestion[] {
    return [...this.waits.values()].filter((w) => !w.answer && !w.closed).map((w) => ({ ...w.view }));
  }

  /** Whether any call waits for input. */
  waiting(): boolean {
    return this.waits.size > 0;
  }

  /**
   * Waits for the answer to a question or a client tool's result until the call's deadline (kept
   * in the turn, so a continued run waits only for what is left). Returns what the model reads, or
   * INTERRUPTED when the run must continue as new first.
   */
  async ask(
    c: CarriedCall,
    pending: PendingToolCall,
    def: ToolDefinition,
  ): Promise<QuestionOutcome | typeof INTERRUPTED> {
    const first = c.question === undefined;
    const isQuestion = def.name === ASK_USER_TOOL && def.category === 'human';
    const args = (isQuestion ? pending.args : {}) as Partial<AskUserArgs>;
    const spec = isQuestion ? undefined : this.host.input.clientTools?.[def.name];
    if (first && this.waits.size >= QUESTION_LIMITS.open) {
      return {
        content: `${QUESTION_LIMITS.open} questions and client tool calls already wait for answers; wait for them before asking more.`,
        isError: true,
      };
    }
    const timeoutMs = timeoutOf(this.host.input, isQuestion ? args.timeout_seconds : spec?.timeoutSeconds);
    const q = (c.question ??= { askedAt: Date.now(), deadline: Date.now() + timeoutMs });
    const schema = isQuestion ? args.schema : spec?.output;
    const hasDefault = isQuestion && args.default !== undefined;
    const view: PendingQuestion = {
      toolCallId: pending.toolCallId,
      kind: isQuestion ? 'question' : 'client_tool',
      tool: pending.name,
      question: isQuestion ? (args.question ?? '') : (spec as ClientToolSpec).description,
      ...(isQuestion ? {} : { args: pending.args }),
      ...(schema ? { schema } : {}),
      hasDefault,
      ...(hasDefault ? { default: args.default } : {}),
      step: pending.step,
      deadline: new Date(q.deadline).toISOString(),
      requestedAt: new Date(q.askedAt).toISOString(),
    };
    const wait: QuestionWait = { view, schema, answer: q.answer ?? null, closed: false };
    const answeredEarlier = q.answer !== undefined;
    pending.state = 'awaiting_input';
    this.waits.set(pending.toolCallId, wait);
    this.host.questionsChanged();
    if (first) {
      this.host.emit({
        kind: 'tool_started',
        toolCallId: pending.toolCallId,
        tool: pending.name,
        args: pending.args,
      });
      this.host.emit({
        kind: 'question_asked',
        toolCallId: pending.toolCallId,
        tool: pending.name,
        text: view.question,
        ...(isQuestion ? {} : { args: pending.args }),
      });
      if (isQuestion) await this.host.raise(this.notice(view, true));
    }
    try {
      const remaining = q.deadline - Date.now();
      if (wait.answer === null && remaining > 0) {
        await condition(
          () => wait.answer !== null || this.drain.shouldDrain() || this.host.stopping() !== null,
          remaining,
          { summary: `answer timeout for ${pending.name.slice(0, 64)} (${pending.toolCallId.slice(0, 64)})` },
        );
      }
      // From here on the outcome is decided: a late answer is refused, not half-taken.
      wait.closed = true;
      if (wait.answer) q.answer = wait.answer;
      const stopped = wait.answer === null ? this.host.stopping() : null;
      if (wait.answer === null && this.drain.draining() && stopped === null) return INTERRUPTED;
      const waitedFor = formatWait(q.deadline - q.askedAt);
      const answer = wait.answer;
      let outcome: QuestionOutcome;
      let said: string;
      if (answer) {
        outcome = { content: answerText(answer.value), isError: false };
        said = `answered${answer.by ? ` from ${answer.by}` : ''}: ${answerPreview(answer.value)}`;
      } else if (stopped) {
        said = `the run stopped (${stopped}) while ${pending.name} waited for an answer`;
        outcome = { content: `The run stopped (${stopped}) before an answer came.`, isError: true };
      } else if (hasDefault) {
        said = `no answer within ${waitedFor}; the default was taken: ${answerPreview(args.default)}`;
        outcome = {
          content: `No answer came within ${waitedFor}; the default answer is taken: ${answerText(args.default)}`,
          isError: false,
        };
      } else {
        said = `no answer within ${waitedFor}`;
        outcome = {
          content: isQuestion
            ? `No answer came within ${waitedFor}. Go on without it, or say in your final answer what you still need from the user.`
            : `The client returned no result for ${pending.name} within ${waitedFor}; the call was not made.`,
          isError: true,
        };
      }
      if (!answeredEarlier) {
        if (outcome.isError) this.host.setLastError(`${pending.name} (${pending.toolCallId}): ${said}`);
        this.host.emit({
          kind: 'question_answered',
          toolCallId: pending.toolCallId,
          tool: pending.name,
          text: said,
          ...(outcome.isError ? { isError: true } : {}),
        });
        this.host.emit({
          kind: 'tool_finished',
          toolCallId: pending.toolCallId,
          tool: pending.name,
          text: outcome.content,
          isError: outcome.isError,
          durationMs: Math.max(0, Date.now() - q.askedAt),
        });
        if (isQuestion) await this.host.raise(this.notice(view, false, answer !== null, said));
      }
      return outcome;
    } finally {
      this.waits.delete(pending.toolCallId);
      pending.state = 'queued';
      this.host.questionsChanged();
    }
  }

  /**
   * The notification that asks (HIGH, with a link to the form) and, with the same id, how it ended
   * (NORMAL), so the user's inbox holds one item per question, updated in place.
   */
  private notice(
    view: PendingQuestion,
    waiting: boolean,
    answered = false,
    outcome?: string,
  ): ValidNotificationInput {
    const parent = this.host.input.parent;
    const of = parent ? ` (sub-agent ${cut(parent.agent, 64)} of run ${cut(parent.workflowId, 256)})` : '';
    const short = cut(view.question.replace(/\s+/g, ' '), QUESTION_NOTICE_BOUNDS.titleChars);
    return {
      id: `question:${workflowInfo().workflowId}:${view.toolCallId}`.slice(0, 200),
      type: waiting ? 'info' : answered ? 'success' : 'warning',
      priority: waiting ? NotificationPriority.HIGH : NotificationPriority.NORMAL,
      title: waiting ? `Question: ${short}` : `${answered ? 'Answered' : 'Not answered'}: ${short}`,
      message: waiting
        ? `${cut(view.question, QUESTION_NOTICE_BOUNDS.questionChars)} (answer until ${view.deadline}${of})`
        : `${cut(outcome ?? '', 2000)}${of}`,
      detail: questionNoticeDetail({
        run: workflowInfo().workflowId,
        toolCallId: view.toolCallId,
        question: view.question,
        deadline: view.deadline,
        waiting,
        ...(outcome ? { outcome: `${outcome[0]?.toUpperCase() ?? ''}${outcome.slice(1)}.` } : {}),
        ...(parent ? { parent: { run: parent.workflowId, agent: parent.agent } } : {}),
      }),
      display_time: 30,
      group: QUESTION_GROUP,
    };
  }
}

/** A refusal of the validator, typed so clients can tell "already answered" from "invalid". */
function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** How long a call waits: its own timeout, else the policy's, else {@link DEFAULT_QUESTION_TIMEOUT}. */
function timeoutOf(input: ParsedAgentInput, seconds: number | undefined): number {
  if (seconds !== undefined) return seconds * 1000;
  return msToNumber((input.policy.questionTimeout ?? DEFAULT_QUESTION_TIMEOUT) as Duration);
}

/** A wait in words: `90 s`, `2 h`, `1 d`, `1.5 h`. */
function formatWait(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 6) / 10} min`;
  if (s < 172_800) return `${Math.round(s / 360) / 10} h`;
  return `${Math.round(s / 8640) / 10} d`;
}
