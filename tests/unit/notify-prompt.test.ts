import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AGENT_TOOL_NOTIFICATION_DEFAULTS,
  NOTIFICATION_TYPES,
  NotificationInputSchema,
  NotificationPriority,
} from '../../shared/notifications/schema';
import { NOTIFY_USER_SUCCESS, loadNotifyUserPrompt } from '../../prompts/notify-user';

const PROMPT_PATH = join(__dirname, '..', '..', 'prompts', 'notify-user.md');
const prompt = readFileSync(PROMPT_PATH, 'utf8');
const lines = prompt.split('\n');
const PRIORITY_LINE = 'priority values: 20 high urgency, 10 normal urgency; omit for high';

/** The bullet that documents one argument: from "- `name`" up to the next bullet or heading. */
function argumentDoc(name: string): string {
  const start = lines.findIndex((line) => line.startsWith(`- \`${name}\``));
  if (start < 0) return '';
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => line.startsWith('- ') || line.startsWith('#') || line.trim() === '');
  return [lines[start], ...(end < 0 ? rest : rest.slice(0, end))].join('\n');
}

describe('prompts/notify-user.md', () => {
  it('contains the exact priority line, as a line of its own', () => {
    expect(lines).toContain(PRIORITY_LINE);
  });

  it.each(Object.entries(NotificationPriority))(
    'documents priority %s as its numeric value %d, on the priority line',
    (name, value) => {
      expect(PRIORITY_LINE).toContain(`${value} ${name.toLowerCase()} urgency`);
      expect(lines.find((line) => line.startsWith('priority values:'))).toContain(
        `${value} ${name.toLowerCase()} urgency`,
      );
    },
  );

  it('documents no priority value that the enum lacks', () => {
    const documented = [...PRIORITY_LINE.matchAll(/(\d+) \w+ urgency/g)].map((m) => Number(m[1]));
    expect(documented.sort()).toEqual(Object.values(NotificationPriority).sort());
  });

  it('says omitting priority means the agent default, HIGH', () => {
    const [name] = Object.entries(NotificationPriority).find(
      ([, value]) => value === AGENT_TOOL_NOTIFICATION_DEFAULTS.priority,
    )!;
    expect(PRIORITY_LINE).toContain(`omit for ${name.toLowerCase()}`);
    expect(argumentDoc('priority')).toContain(`default ${AGENT_TOOL_NOTIFICATION_DEFAULTS.priority}`);
  });

  it('documents every tool argument (all inputs but the API-only display_time)', () => {
    const names = Object.keys(NotificationInputSchema.shape).filter((name) => name !== 'display_time');
    expect(names).toEqual(['message', 'title', 'detail', 'type', 'priority', 'timeout', 'id', 'group']);
    for (const name of names) expect(argumentDoc(name)).not.toBe('');
  });

  it('marks message required and the others optional', () => {
    expect(argumentDoc('message')).toMatch(/required/);
    for (const name of ['title', 'detail', 'type', 'priority', 'timeout', 'id', 'group']) {
      expect(argumentDoc(name)).toMatch(/optional/);
    }
  });

  it('describes detail as expandable HTML', () => {
    expect(argumentDoc('detail')).toMatch(/expand/i);
    expect(argumentDoc('detail')).toMatch(/HTML/);
  });

  it('documents timeout as display seconds with the agent default', () => {
    const doc = argumentDoc('timeout');
    expect(doc).toMatch(/seconds/);
    expect(doc).toContain(`default ${AGENT_TOOL_NOTIFICATION_DEFAULTS.displayTime}`);
  });

  it('documents id as update in place, e.g. for progress', () => {
    expect(argumentDoc('id')).toMatch(/update that one in place/);
    expect(argumentDoc('id')).toMatch(/progress/);
  });

  it('lists every notification type in the type argument', () => {
    for (const type of NOTIFICATION_TYPES) expect(argumentDoc('type')).toContain(`\`${type}\``);
  });

  it('says notify_user is for progress or alerts and not the final answer', () => {
    expect(prompt).toContain('Use it for progress or alerts only.');
    expect(prompt).toContain('It is not the final answer');
  });

  it('restricts success to completed tasks', () => {
    expect(prompt).toMatch(/`success`: only for a task that has actually been completed/);
  });

  it('says plain notes use info with NORMAL priority', () => {
    expect(prompt).toContain(`Plain notes use type \`info\` with priority ${NotificationPriority.NORMAL}.`);
  });

  it('quotes the success reply and the contract error messages', () => {
    expect(prompt).toContain(`"${NOTIFY_USER_SUCCESS}"`);
    expect(prompt).toContain('Invalid notification type: ');
    expect(prompt).toContain('Invalid notification priority: ');
    expect(prompt).toContain('Message is required');
  });

  it('has examples that use only documented arguments, types and priorities', () => {
    const examples = [...prompt.matchAll(/```json\n([\s\S]*?)\n```/g)].map(
      (m) => JSON.parse(m[1]!) as Record<string, unknown>,
    );
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      expect(NotificationInputSchema.strict().safeParse(example).success).toBe(true);
    }
  });
});

describe('prompts/notify-user.ts', () => {
  it('has the exact success message', () => {
    expect(NOTIFY_USER_SUCCESS).toBe('The notification has been sent to the user.');
  });

  it('loads the prompt file without trailing whitespace', () => {
    expect(loadNotifyUserPrompt()).toBe(prompt.trimEnd());
  });

  it('loads another file when given a path, and throws for a missing one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-prompt-'));
    const file = join(dir, 'custom.md');
    writeFileSync(file, 'custom text\n\n');
    expect(loadNotifyUserPrompt(file)).toBe('custom text');
    expect(() => loadNotifyUserPrompt(join(dir, 'missing.md'))).toThrow(/ENOENT/);
  });
});
