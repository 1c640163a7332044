/**
 * A call waiting for input, as a form built from its JSON Schema: text, numbers, a choice (radio
 * buttons, or a list when long), a date, a checkbox, nested objects as field sets, and JSON where
 * the schema is richer than fields can say. The page checks what it can (required fields, numbers,
 * JSON) and the run checks the rest; either way the reasons are shown in the page, beside the field
 * they are about, and nothing is lost. Answers and questions are text nodes only: HTML in them
 * stays text.
 */
import { questionAnchor } from '../shared/question-notice';
import { h, json, timeEl } from './dom';
import { ApiError, api } from './http';
import type { PendingQuestion } from './types';

type Schema = Record<string, unknown>;

/** What a field gives: its value, nothing (an empty optional field), or why it cannot. */
type Read = { value: unknown } | { missing: true } | { error: string };

interface Field {
  el: HTMLElement;
  /** The path the run names it by in its reasons (`seats`, `address.city`, `` for the whole answer). */
  path: string;
  read(): Read;
  /** Shows (or clears) a message under the field. */
  say(message: string | null): void;
  /** Every field inside, this one included, for messages. */
  all(): Field[];
  /** The first control, to focus. */
  focusable(): HTMLElement | null;
}

/** Choices shown as radio buttons up to this many; more go in a list. */
const MAX_RADIOS = 5;

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A field's own message element, announced when it changes. */
function messageEl(id: string): HTMLElement {
  return h('p', { id, class: 'field-error', role: 'alert', hidden: true });
}

function labelText(name: string, schema: Schema, required: boolean): string {
  const title = typeof schema.title === 'string' ? schema.title : name;
  return `${title}${required ? ' *' : ''}`;
}

/** The field for `schema` at `path`; `name` labels it, `base` prefixes element ids. */
function fieldFor(
  schema: Schema | undefined,
  path: string,
  name: string,
  required: boolean,
  base: string,
): Field {
  const id = `${base}-${path.replace(/[^\w-]/g, '_') || 'answer'}`;
  const msg = messageEl(`${id}-msg`);
  const hint =
    typeof schema?.description === 'string' ? h('p', { class: 'muted hint' }, schema.description) : null;
  const say = (control: HTMLElement | null) => (m: string | null) => {
    msg.textContent = m ?? '';
    msg.hidden = m === null;
    if (control) {
      if (m === null) control.removeAttribute('aria-invalid');
      else control.setAttribute('aria-invalid', 'true');
    }
  };
  const simple = (el: HTMLElement, control: HTMLElement | null, read: () => Read): Field => {
    const field: Field = { el, path, read, say: say(control), all: () => [field], focusable: () => control };
    return field;
  };

  if (schema && Array.isArray(schema.enum)) {
    const choices = schema.enum as unknown[];
    if (choices.length <= MAX_RADIOS) {
      const radios = choices.map((_c, i) =>
        h('input', {
          type: 'radio',
          name: id,
          id: `${id}-${i}`,
          value: String(i),
          'aria-describedby': msg.id,
        }),
      );
      const el = h(
        'fieldset',
        { class: 'field choice' },
        h('legend', {}, labelText(name, schema, required)),
        hint,
        ...radios.map((r, i) => h('label', { for: r.id, class: 'radio' }, r, ` ${String(choices[i])}`)),
        msg,
      );
      return simple(el, radios[0] ?? null, () => {
        const picked = radios.findIndex((r) => r.checked);
        return picked < 0 ? { missing: true } : { value: choices[picked] };
      });
    }
    const select = h(
      'select',
      { id, 'aria-describedby': msg.id },
      h('option', { value: '' }, '— choose —'),
      ...choices.map((c, i) => h('option', { value: String(i) }, String(c))),
    );
    const el = h(
      'div',
      { class: 'field' },
      h('label', { for: id }, labelText(name, schema, required)),
      hint,
      select,
      msg,
    );
    return simple(el, select, () =>
      select.value === '' ? { missing: true } : { value: choices[Number(select.value)] },
    );
  }

  const type = schema?.type;
  if (type === 'boolean') {
    const box = h('input', { type: 'checkbox', id, 'aria-describedby': msg.id });
    const el = h(
      'div',
      { class: 'field check' },
      h('label', { for: id }, box, ` ${labelText(name, schema as Schema, false)}`),
      hint,
      msg,
    );
    return simple(el, box, () => ({ value: box.checked }));
  }

  if (type === 'number' || type === 'integer') {
    const s = schema as Schema;
    const input = h('input', {
      type: 'number',
      id,
      step: type === 'integer' ? 1 : 'any',
      min: typeof s.minimum === 'number' ? s.minimum : null,
      max: typeof s.maximum === 'number' ? s.maximum : null,
      inputmode: type === 'integer' ? 'numeric' : 'decimal',
      'aria-describedby': msg.id,
    });
    const el = h(
      'div',
      { class: 'field' },
      h('label', { for: id }, labelText(name, s, required)),
      hint,
      input,
      msg,
    );
    return simple(el, input, () => {
      const text = input.value.trim();
      if (!text) return input.validity.badInput ? { error: 'enter a number' } : { missing: true };
      const n = Number(text);
      return Number.isFinite(n) ? { value: n } : { error: 'enter a number' };
    });
  }

  if (type === 'object' && isSchema(schema?.properties)) {
    const s = schema;
    const requiredKeys = Array.isArray(s.required) ? (s.required as string[]) : [];
    const children = Object.entries(s.properties as Record<string, unknown>).map(([key, sub]) =>
      fieldFor(
        isSchema(sub) ? sub : undefined,
        path ? `${path}.${key}` : key,
        key,
        requiredKeys.includes(key),
        base,
      ),
    );
    const el = h(
      'fieldset',
      { class: 'field object' },
      h('legend', {}, labelText(name, s, required)),
      hint,
      ...children.map((c) => c.el),
      msg,
    );
    const field: Field = {
      el,
      path,
      say: say(null),
      all: () => [field, ...children.flatMap((c) => c.all())],
      focusable: () => children[0]?.focusable() ?? null,
      read: () => {
        const out: Record<string, unknown> = {};
        let problem = false;
        children.forEach((c, i) => {
          const key = Object.keys(s.properties as object)[i] as string;
          const r = c.read();
          c.say(null);
          if ('error' in r) {
            c.say(r.error);
            problem = true;
          } else if ('missing' in r) {
            if (requiredKeys.includes(key)) {
              c.say('is required');
              problem = true;
            }
          } else out[key] = r.value;
        });
        return problem ? { error: 'fix the fields marked' } : { value: out };
      },
    };
    return field;
  }

  if (!schema || type === 'string') {
    const s = schema ?? {};
    const format = s.format;
    const long = !schema || (typeof s.maxLength === 'number' && s.maxLength > 200);
    const common = {
      id,
      'aria-describedby': msg.id,
      minlength: typeof s.minLength === 'number' ? s.minLength : null,
      maxlength: typeof s.maxLength === 'number' ? s.maxLength : null,
    };
    const control =
      format === 'date' || format === 'date-time' || format === 'email'
        ? h('input', { ...common, type: format === 'date-time' ? 'datetime-local' : format })
        : long
          ? h('textarea', { ...common, rows: 3 })
          : h('input', { ...common, type: 'text' });
    const el = h(
      'div',
      { class: 'field' },
      h('label', { for: id }, labelText(name, s, required)),
      hint,
      control,
      msg,
    );
    return simple(el, control, () => {
      const v = control.value;
      if (v === '') return { missing: true };
      // A datetime-local gives minutes without a zone; the schema's date-time wants seconds and one.
      if (format === 'date-time' && /^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(v))
        return { value: new Date(v).toISOString() };
      return { value: v };
    });
  }

  // Lists, alternatives and references: the answer is written as JSON.
  const area = h('textarea', { id, rows: 4, spellcheck: false, 'aria-describedby': msg.id });
  const el = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, `${labelText(name, schema, required)} (JSON)`),
    hint,
    h('pre', { class: 'schema muted' }, json(schema)),
    area,
    msg,
  );
  return simple(el, area, () => {
    if (!area.value.trim()) return { missing: true };
    try {
      return { value: JSON.parse(area.value) as unknown };
    } catch (err) {
      return { error: `not valid JSON: ${(err as Error).message}` };
    }
  });
}

/**
 * The run's reasons, one per field: `The answer to q1 was refused: seats: must be at least 1; got
 * 0; name: is required. It still waits for an answer.` → seats and name, with their messages.
 */
function reasonsByPath(message: string): { path: string; text: string }[] {
  const m = /was refused: (.*?)(?:\. It still waits for an answer\.)?$/s.exec(message);
  if (!m?.[1]) return [];
  // Reasons are joined by "; ", which a reason may hold too ("at least 1; got 0"): split before a path only.
  return m[1].split(/; (?=(?:[\w$.[\]"]+|the answer): )/).flatMap((part) => {
    const at = /^([\w$.[\]"]+|the answer): (.*)$/s.exec(part);
    return at ? [{ path: at[1] === 'the answer' ? '' : (at[1] as string), text: at[2] as string }] : [];
  });
}

/** The card for `q`: what is asked (or the client tool's call), the form, and the send button. */
export function questionCard(runId: string, q: PendingQuestion, onAnswered: () => void): HTMLElement {
  const base = `q-${q.toolCallId.replace(/[^\w-]/g, '_')}`;
  const schema = q.schema;
  const field = fieldFor(schema, '', q.kind === 'question' ? 'Your answer' : 'Result', true, base);
  const errorEl = h('p', { class: 'error', role: 'alert', hidden: true });
  const sendBtn = h(
    'button',
    { type: 'submit', class: 'answer' },
    q.kind === 'question' ? 'Send answer' : 'Send result',
  );
  const form = h(
    'form',
    { class: 'question-form', novalidate: true },
    field.el,
    h('div', { class: 'actions' }, sendBtn),
    errorEl,
  );
  const problem = (text: string | null) => {
    errorEl.textContent = text ?? '';
    errorEl.hidden = text === null;
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    problem(null);
    for (const f of field.all()) f.say(null);
    const r = field.read();
    if ('error' in r || 'missing' in r) {
      if ('missing' in r) field.say('is required');
      problem('The answer is not complete: see the fields marked.');
      return;
    }
    sendBtn.disabled = true;
    void api('POST', `/api/questions/${encodeURIComponent(runId)}/${encodeURIComponent(q.toolCallId)}`, {
      answer: r.value,
      by: 'web',
    })
      .then(() => {
        card.classList.add('answered');
        form
          .querySelectorAll('input, select, textarea, button')
          .forEach((c) => c.setAttribute('disabled', ''));
        problem(null);
        card.append(h('p', { class: 'done', role: 'status' }, 'Answered.'));
        onAnswered();
      })
      .catch((err: unknown) => {
        sendBtn.disabled = false;
        const text = err instanceof ApiError ? err.message : `Could not send: ${(err as Error).message}`;
        problem(text);
        const fields = field.all();
        for (const reason of err instanceof ApiError ? reasonsByPath(text) : []) {
          (fields.find((f) => f.path === reason.path) ?? field).say(reason.text);
        }
      });
  });
  const card = h(
    'article',
    {
      class: 'question',
      id: questionAnchor(q.toolCallId),
      'data-tool-call': q.toolCallId,
      'aria-labelledby': `${base}-h`,
    },
    h(
      'h3',
      { id: `${base}-h` },
      q.kind === 'question' ? 'Question ' : `Client tool ${q.tool} `,
      h('code', {}, q.toolCallId),
    ),
    h('p', { class: 'question-text' }, q.question),
    q.args !== undefined ? h('pre', { class: 'args' }, json(q.args)) : null,
    h(
      'p',
      { class: 'muted' },
      'Until ',
      timeEl(q.deadline),
      q.hasDefault ? ` · then the default is taken: ${JSON.stringify(q.default)}` : '',
    ),
    form,
  );
  return card;
}

/** Focuses the form a link opened (`#question-<call id>`), once it is on the page. */
export function focusLinkedQuestion(root: ParentNode): boolean {
  const id = decodeURIComponent(location.hash.slice(1));
  if (!id.startsWith('question-')) return false;
  const card = root.querySelector<HTMLElement>(`#${CSS.escape(id)}`);
  if (!card) return false;
  card.scrollIntoView({ block: 'start' });
  card.querySelector<HTMLElement>('input, select, textarea')?.focus();
  return true;
}
