/**
 * A run's page: live state (polled: a run's queries cannot push), its events as they happen,
 * pending approvals with approve / edit / reject, the transcript with tool calls and results, and
 * the final answer with its citations as links.
 */
import { approvalCard } from './approval-card';
import { focusLinkedQuestion, questionCard } from './question-form';
import { append, appRoot, h, json, timeEl } from './dom';
import { ApiError, api } from './http';
import { runPagePath } from '../shared/approval-notice';
import { formatRunBuild } from '../shared/worker-versioning';
import { follow } from './sse';
import type {
  AgentEvent,
  PendingApproval,
  PendingQuestion,
  RunAnswer,
  RunDetail,
  TranscriptEntry,
  TranscriptPage,
} from './types';

const POLL_MS = 1_000;

/** Only web links become clickable; a `file://` or `javascript:` location stays text. */
function safeHref(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/**
 * Who speaks in a transcript entry; a tool result names its tool and call, so two results of one
 * tool are told apart (and matched to the call that asked for them).
 */
function roleEl(t: TranscriptEntry): HTMLElement {
  if (t.role !== 'tool') return h('div', { class: 'role' }, t.role);
  return h(
    'div',
    { class: 'role' },
    'tool result',
    t.name ? ': ' : null,
    t.name ? h('span', { class: 'tool-name' }, t.name) : null,
    t.toolCallId ? ' ' : null,
    t.toolCallId ? h('code', { class: 'call-id' }, t.toolCallId) : null,
  );
}

/** The answer came without its sources (the run's citations could not be read yet). */
class SourcesUnreadable extends Error {}

/** Starts the run page for `runId`. */
export function startRun(runId: string): void {
  const root = appRoot();
  const path = `/api/runs/${encodeURIComponent(runId)}`;
  const stateEl = h('dl', { class: 'state', id: 'run-state' });
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const approvalsEl = h('div', { id: 'approvals' });
  const questionsEl = h('div', { id: 'questions' });
  const eventsEl = h('ol', {
    id: 'events',
    class: 'events',
    'aria-live': 'polite',
    'aria-relevant': 'additions',
  });
  const transcriptEl = h('ol', { id: 'transcript', class: 'transcript' });
  const answerEl = h('div', { id: 'answer' });
  // The model's answer typed as it comes (live tokens), until the run's answer replaces it.
  const liveEl = h('p', { id: 'live', class: 'live', 'aria-live': 'polite', hidden: true });
  const transcriptNote = h(
    'p',
    { class: 'muted', hidden: true },
    `Earlier messages: durable-agent transcript ${runId}`,
  );
  // The run's parts, shown once the run is read: an id that names no run shows only that message.
  const content = h('div', { id: 'run-content', hidden: true });
  root.append(problem, content);
  content.append(
    h('section', { 'aria-labelledby': 'h-state' }, h('h2', { id: 'h-state' }, 'State'), stateEl),
    h(
      'section',
      { 'aria-labelledby': 'h-questions', id: 'questions-section', hidden: true },
      h('h2', { id: 'h-questions' }, 'Waiting for your answer'),
      questionsEl,
    ),
    h(
      'section',
      { 'aria-labelledby': 'h-approvals' },
      h('h2', { id: 'h-approvals' }, 'Waiting for approval'),
      approvalsEl,
    ),
    h('section', { 'aria-labelledby': 'h-answer' }, h('h2', { id: 'h-answer' }, 'Answer'), liveEl, answerEl),
    h(
      'div',
      { class: 'columns' },
      h('section', { 'aria-labelledby': 'h-events' }, h('h2', { id: 'h-events' }, 'Events'), eventsEl),
      h(
        'section',
        { 'aria-labelledby': 'h-transcript' },
        h('h2', { id: 'h-transcript' }, 'Transcript'),
        transcriptNote,
        transcriptEl,
      ),
    ),
  );

  /** The last event shown; the `events` query answers those after it. */
  let eventSeq = 0;
  let lastStep = -1;
  let lastStatus = '';
  /** The calls the approvals section shows; null until it is first drawn (an empty list draws too). */
  let approvalKeys: string | null = null;
  let questionKeys: string | null = null;
  /** Whether the form a link opened (`#question-…`) was focused yet. */
  let linkedFocused = false;
  let finished = false;

  const showProblem = (text: string | null) => {
    problem.textContent = text ?? '';
    problem.hidden = text === null;
  };

  function renderState(d: RunDetail): void {
    const s = d.state;
    const rows: [string, Node | string][] = [
      ['Status', h('span', { class: `status status-${s.status}` }, s.status.replace(/_/g, ' '))],
      ['Execution', d.execution],
      ['Step', `${s.step} of ${s.maxSteps}`],
      ['Started', timeEl(d.started)],
      ['Model calls', String(s.usage.modelCalls)],
      ['Tool calls', String(s.usage.toolCalls)],
      ['Tokens', `${s.usage.inputTokens ?? 0} in, ${s.usage.outputTokens ?? 0} out`],
    ];
    if (s.costUsd !== undefined) rows.push(['Cost', `$${s.costUsd.toFixed(4)}`]);
    if (s.continuations > 0) rows.push(['Continued as new', String(s.continuations)]);
    if (d.build) rows.push(['Build', formatRunBuild(d.build)]);
    if (s.stopReason) rows.push(['Stopped because', s.stopReason.replace(/_/g, ' ')]);
    for (const r of d.retrying ?? []) {
      const next = r.nextAttemptAt ? [', next attempt ', timeEl(r.nextAttemptAt)] : [', attempt running'];
      rows.push([
        'Retrying',
        h(
          'span',
          { class: 'retrying' },
          `${r.activity}: attempt ${r.attempt} (the last failed: ${r.lastError})`,
          ...next,
        ),
      ]);
    }
    if (s.parent) {
      rows.push([
        'Sub-agent of',
        h(
          'span',
          {},
          h('a', { href: runPagePath(s.parent.workflowId) }, s.parent.workflowId),
          ` (as ${s.parent.agent}, call ${s.parent.toolCallId})`,
        ),
      ]);
    }
    for (const c of s.agents ?? []) {
      const cost = c.costUsd ? `, $${c.costUsd.toFixed(4)}` : '';
      rows.push([
        'Sub-agent',
        h(
          'span',
          { class: `sub-agent status-${c.status}` },
          h('a', { href: runPagePath(c.workflowId) }, `${c.agent} (${c.toolCallId})`),
          `: ${c.status.replace(/_/g, ' ')}, ${c.steps} steps, ${c.usage.inputTokens}+${c.usage.outputTokens} tokens${cost}`,
          ...(c.error ? [` (${c.error})`] : []),
        ),
      ]);
    }
    if (s.lastError) rows.push(['Last error', s.lastError]);
    if (d.task) rows.push(['Task', d.task]);
    stateEl.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  }

  function renderApprovals(list: PendingApproval[]): void {
    const keys = list.map((a) => a.toolCallId).join('\n');
    // Cards keep what someone is typing: they are only rebuilt when the set of calls changes.
    if (keys === approvalKeys) return;
    approvalKeys = keys;
    approvalsEl.replaceChildren(
      ...(list.length
        ? list.map((a) => approvalCard(runId, a, () => void poll()))
        : [h('p', { class: 'muted' }, 'Nothing waits for approval.')]),
    );
  }

  function renderQuestions(list: PendingQuestion[]): void {
    const keys = list.map((q) => q.toolCallId).join('\n');
    // Forms keep what someone is typing: they are only rebuilt when the set of calls changes.
    if (keys === questionKeys) return;
    questionKeys = keys;
    // A card answered on this page stays, saying so, after its call has left the run's list.
    const answered = [...questionsEl.querySelectorAll<HTMLElement>('article.question.answered')].filter(
      (card) => !list.some((q) => q.toolCallId === card.dataset.toolCall),
    );
    const section = document.getElementById('questions-section');
    if (section) section.hidden = list.length === 0 && answered.length === 0;
    questionsEl.replaceChildren(...answered, ...list.map((q) => questionCard(runId, q, () => void poll())));
    if (!linkedFocused) linkedFocused = focusLinkedQuestion(questionsEl);
  }

  function eventEl(e: AgentEvent): HTMLLIElement {
    const what = [
      e.tool,
      e.toolCallId ? `(${e.toolCallId})` : '',
      e.durationMs !== undefined ? `${e.durationMs} ms` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return h(
      'li',
      { class: `event kind-${e.kind}${e.isError ? ' is-error' : ''}` },
      h('span', { class: 'kind' }, e.kind.replace(/_/g, ' ')),
      ` step ${e.step} `,
      what,
      e.text ? h('span', { class: 'event-text' }, ` — ${e.text}`) : null,
      ' ',
      timeEl(e.at),
    );
  }

  async function loadTranscript(): Promise<void> {
    const page = await api<TranscriptPage>('GET', `${path}/transcript`);
    transcriptEl.start = page.first + 1;
    transcriptEl.replaceChildren(
      ...page.entries.map((t) =>
        h(
          'li',
          { class: `msg role-${t.role}${t.isError ? ' is-error' : ''}` },
          roleEl(t),
          t.text ? h('pre', { class: 'text' }, t.text) : null,
          t.fullBytes ? h('p', { class: 'muted' }, `(a preview of ${t.fullBytes} bytes)`) : null,
          ...(t.toolCalls ?? []).map((call) =>
            h(
              'div',
              { class: 'call' },
              h('span', { class: 'tool' }, `→ ${call.name}`),
              ' ',
              h('code', {}, call.id),
              h('pre', {}, json(call.args)),
            ),
          ),
        ),
      ),
    );
    transcriptNote.hidden = !page.truncated;
  }

  async function loadAnswer(): Promise<void> {
    const a = await api<RunAnswer>('GET', `${path}/answer`);
    if (a.answer === null) {
      answerEl.replaceChildren(h('p', { class: 'muted' }, 'No answer yet.'));
      return;
    }
    // The sources are listed once, as links, under the text (not also as text inside it).
    answerEl.replaceChildren(
      // A structured answer is shown as the JSON it parsed to, indented.
      a.output !== undefined
        ? h('pre', { class: 'answer-text answer-output' }, JSON.stringify(a.output, null, 2))
        : h('div', { class: 'answer-text' }, a.body ?? a.answer),
    );
    append(
      answerEl,
      a.citations.length
        ? h(
            'ol',
            { class: 'citations', 'aria-label': 'Sources' },
            ...a.citations.map((c) => {
              const href = safeHref(c.url);
              return h(
                'li',
                { value: c.n },
                href
                  ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, c.title || c.location)
                  : c.title,
                ' ',
                // A knowledge-base file by its path in the knowledge base, not the server's folders.
                h('span', { class: 'muted location' }, c.filename ?? c.location),
              );
            }),
          )
        : null,
    );
    // Shown without its sources for now. Failing the poll reads the answer again at the next one,
    // even for a finished run (which otherwise is not read again), and says why meanwhile.
    if (a.warning) throw new SourcesUnreadable(a.warning);
  }

  async function poll(): Promise<void> {
    try {
      const d = await api<RunDetail>('GET', path);
      showProblem(null);
      content.hidden = false;
      renderState(d);
      renderApprovals(d.state.approvals ?? []);
      renderQuestions(d.state.questions ?? []);
      const events = await api<{ events: AgentEvent[] }>('GET', `${path}/events?since=${eventSeq}`);
      for (const e of events.events) {
        if (e.seq <= eventSeq) continue;
        eventSeq = e.seq;
        eventsEl.append(eventEl(e));
      }
      const done = d.execution !== 'RUNNING';
      if (d.state.step !== lastStep || d.state.status !== lastStatus || done !== finished) {
        lastStep = d.state.step;
        lastStatus = d.state.status;
        await Promise.all([loadTranscript(), loadAnswer()]);
      }
      finished = done;
    } catch (err) {
      showProblem(
        err instanceof ApiError && err.status === 404
          ? err.message
          : err instanceof SourcesUnreadable
            ? `The answer is shown without its sources: ${err.message}; retrying`
            : `Cannot reach the run: ${(err as Error).message}; retrying`,
      );
    }
  }

  // Live tokens: `token` frames of the newest model call, typed in place (its text, then each tool
  // call it writes as `→ tool arguments…`); a retried call starts over.
  let lastStreamId = '';
  let streamEnded = false;
  let live: { step: number; call: string; text: string; tools: Map<number, { name: string; args: string }> } =
    {
      step: 0,
      call: '',
      text: '',
      tools: new Map(),
    };
  const renderLive = () => {
    liveEl.hidden = false;
    liveEl.replaceChildren(
      `Step ${live.step}: ${live.text}`,
      ...[...live.tools.values()].map((t) => h('span', { class: 'live-tool' }, `→ ${t.name} ${t.args}`)),
    );
  };
  /** The live call: the same one, or a new one (or attempt) that starts over. */
  const liveCall = (step: number, call: string) => {
    if (live.call !== call) live = { step, call, text: '', tools: new Map() };
    return live;
  };
  const addToolArgs = (index: number, name: string | undefined, args: string) => {
    const t = live.tools.get(index) ?? { name: name ?? 'tool', args: '' };
    if (name) t.name = name;
    t.args += args;
    live.tools.set(index, t);
  };
  follow({
    url: () => `${path}/stream${lastStreamId ? `?lastEventId=${encodeURIComponent(lastStreamId)}` : ''}`,
    done: () => streamEnded,
    onState: () => undefined,
    onEvent: (e) => {
      if (e.id) lastStreamId = e.id;
      if (e.event === 'partial') {
        const p = JSON.parse(e.data) as {
          step: number;
          call: string;
          attempt: number;
          text: string;
          tools?: { index: number; name?: string; args: string }[];
        };
        live = { step: p.step, call: `${p.call}.${p.attempt}`, text: p.text, tools: new Map() };
        for (const t of p.tools ?? []) addToolArgs(t.index, t.name, t.args);
        renderLive();
      } else if (e.event === 'token') {
        const f = JSON.parse(e.data) as {
          step: number;
          call: string;
          attempt: number;
          kind: string;
          text?: string;
          index?: number;
          name?: string;
        };
        const key = `${f.call}.${f.attempt}`;
        if (f.kind === 'start') {
          live = { step: f.step, call: key, text: '', tools: new Map() };
          renderLive();
        } else if (f.kind === 'text' && f.text) {
          liveCall(f.step, key).text += f.text;
          renderLive();
        } else if (f.kind === 'tool') {
          liveCall(f.step, key);
          addToolArgs(f.index ?? 0, f.name, f.text ?? '');
          renderLive();
        }
      } else if (e.event === 'end') {
        streamEnded = true;
        liveEl.hidden = true;
      }
    },
  });

  const loop = async () => {
    await poll();
    // A finished run changes no more; a slow poll still notices a reset or a new run under the id.
    window.setTimeout(() => void loop(), finished ? POLL_MS * 10 : POLL_MS);
  };
  void loop();
}
