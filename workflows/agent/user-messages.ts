import { log } from '@temporalio/workflow';
import type { AgentEvent } from '../../shared/agent';
import { SIZE_BUDGETS, formatBytes, truncateUtf8, utf8Bytes } from '../../shared/temporal-limits';

/** Messages the user sent into the run, waiting for the next model turn (carried over continue-as-new). */
export class UserMessages {
  constructor(
    /** The waiting messages, oldest first. */
    readonly pending: string[],
    private readonly emit: (e: Omit<AgentEvent, 'seq' | 'at' | 'step'>) => void,
  ) {}

  /** A user message for the next turn, cut to its budget; refused (with an event) past the waiting budget. */
  receive(msg: { text?: unknown } | undefined): void {
    // A bad signal payload must not fail the workflow task: record and ignore it.
    const raw = typeof msg?.text === 'string' ? msg.text.trim() : '';
    if (!raw) {
      log.warn('Ignored userMessage signal without text');
      return;
    }
    const text = truncateUtf8(raw, SIZE_BUDGETS.userMessageBytes, 'message').text;
    const waiting = this.pending.reduce((n, t) => n + utf8Bytes(t), 0);
    if (waiting + utf8Bytes(text) > SIZE_BUDGETS.pendingUserMessagesBytes) {
      this.emit({
        kind: 'error',
        text: `User message dropped: messages waiting for the next turn would exceed ${formatBytes(SIZE_BUDGETS.pendingUserMessagesBytes)}. Send it again after the agent's next turn.`,
        isError: true,
      });
      return;
    }
    this.pending.push(text);
    this.emit({ kind: 'user_message', text });
  }

  /** Whether any message waits for the next turn. */
  waiting(): boolean {
    return this.pending.length > 0;
  }

  /** Takes every waiting message, oldest first. */
  take(): string[] {
    return this.pending.splice(0);
  }
}
