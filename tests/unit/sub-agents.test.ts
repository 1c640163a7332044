/**
 * The pure parts of sub-agents: the `agents` input's checks, the child's id and task, the budgets
 * reserved from what a parent has left, and what the parent's model reads of a child.
 */
import { AgentInputSchema } from '../../shared/agent';
import {
  SUB_AGENT_LIMITS,
  childAnswerText,
  childTask,
  childWorkflowId,
  emptyReservation,
  reserveBudgets,
  subAgentArgsProblem,
} from '../../shared/agent/sub-agents';
import { formatZodIssues } from '../../shared/zod-issues';
import { runIdProblem } from '../../shared/identifiers';

const MODEL = { provider: 'scripted', script: 'demo' } as const;

function problems(agents: unknown): string {
  const parsed = AgentInputSchema.safeParse({ task: 't', model: MODEL, agents });
  return parsed.success ? '' : formatZodIssues(parsed.error);
}

describe('the agents input', () => {
  it('accepts nested sub-agents with their own tools, schemas and policy', () => {
    const parsed = AgentInputSchema.parse({
      task: 't',
      model: MODEL,
      agents: {
        researcher: {
          description: 'finds things',
          tools: ['calculator', 'mcp:files'],
          input: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
          output: { type: 'object', properties: { summary: { type: 'string' } } },
          policy: { maxSteps: 5, requireApproval: ['calculator'] },
          agents: { checker: { description: 'checks' } },
        },
      },
    });
    expect(parsed.agents?.researcher?.agents?.checker?.description).toBe('checks');
    expect(parsed.policy.maxAgentDepth).toBe(3);
    expect(parsed.policy.maxChildAgents).toBe(4);
  });

  it('names what to fix: a bad name, a built-in tool’s name, an empty description, a bad tool, policy or schema', () => {
    expect(problems({ Researcher: { description: 'x' } })).toContain(
      'agents.Researcher: bad name: a sub-agent name is lower case',
    );
    expect(problems({ calculator: { description: 'x' } })).toContain(
      `agents.calculator: "calculator" is a built-in tool's name`,
    );
    expect(problems({ a: { description: ' ' } })).toContain(
      'agents.a.description: say what the sub-agent does',
    );
    expect(problems({ a: { description: 'x', tools: ['No pe'] } })).toContain('unknown tool "No pe"');
    expect(problems({ a: { description: 'x', policy: { maxSteps: 0 } } })).toContain(
      'agents.a.policy.maxSteps: Too small',
    );
    expect(problems({ a: { description: 'x', input: { type: 'string' } } })).toContain(
      'input schema must be of type "object"',
    );
    expect(
      problems({ a: { description: 'x', agents: { b: { description: 'y', tools: ['No pe'] } } } }),
    ).toContain('agents.a.agents.b.tools');
    const many = Object.fromEntries(
      Array.from({ length: SUB_AGENT_LIMITS.agents + 1 }, (_, i) => [`a${i}`, { description: 'x' }]),
    );
    expect(problems(many)).toContain(`at most ${SUB_AGENT_LIMITS.agents} sub-agents`);
  });
});

describe('a sub-agent call', () => {
  it('derives the child id from the parent and the call, so a retry finds the same child', () => {
    expect(childWorkflowId('run-1', 'call_7')).toBe('run-1:agent:call_7');
    // A run id people can type, within the run id budget, even under the longest parent id.
    for (const parent of ['run-1', 'r'.repeat(256), `${'r'.repeat(250)}x`]) {
      const id = childWorkflowId(parent, 'c'.repeat(64));
      expect(runIdProblem(id)).toBeNull();
    }
    expect(childWorkflowId('r'.repeat(256), 'c')).not.toBe(childWorkflowId(`${'r'.repeat(255)}s`, 'c'));
  });

  it('gives the task itself under the default schema, else the arguments as JSON', () => {
    expect(childTask({ task: 'find Berlin' }, undefined)).toBe('find Berlin');
    expect(childTask({ city: 'Oslo' }, { type: 'object' })).toBe(
      'Your input (JSON, matching your input schema):\n{\n  "city": "Oslo"\n}',
    );
  });

  it('checks arguments against the input schema (the default wants a task)', () => {
    expect(subAgentArgsProblem('r', undefined, { task: 'x' })).toBeNull();
    expect(subAgentArgsProblem('r', undefined, {})).toBe(
      'Invalid arguments for sub-agent r: task: is required. Fix them and call it again.',
    );
    expect(
      subAgentArgsProblem('r', { type: 'object', properties: { n: { type: 'integer' } } }, { n: 'x' }),
    ).toContain('sub-agent r: n: ');
  });

  it('reserves an equal share of what the parent has left, capped by what the child asks', () => {
    expect(reserveBudgets({ steps: 23 }, {}, 2)).toEqual({ steps: 11 });
    expect(reserveBudgets({ steps: 23 }, { steps: 5 }, 2)).toEqual({ steps: 5 });
    expect(reserveBudgets({ steps: 10, tokens: 1000, costUsd: 1.5 }, { tokens: 100 }, 3)).toEqual({
      steps: 3,
      tokens: 100,
      costUsd: 0.5,
    });
    // Time is not split: children run at once.
    expect(reserveBudgets({ steps: 4, wallClockMs: 60_000 }, {}, 4)).toEqual({
      steps: 1,
      wallClockMs: 60_000,
    });
    // A budget the parent lacks stays the child's own.
    expect(reserveBudgets({ steps: 9 }, { costUsd: 2 }, 1)).toEqual({ steps: 9, costUsd: 2 });
    expect(reserveBudgets({ steps: -2 }, {}, 1)).toEqual({ steps: 0 });
  });

  it('says which reserved budget leaves nothing', () => {
    expect(emptyReservation({ steps: 0 })).toBe('no steps');
    expect(emptyReservation({ steps: 2, costUsd: 0 })).toBe('no cost budget');
    expect(emptyReservation({ steps: 2, wallClockMs: 10 })).toBe('less than a second of wall-clock time');
    expect(emptyReservation({ steps: 1, tokens: 5 })).toBeNull();
  });

  it('hands the parent the typed output, else the answer, cut, and says when the child stopped early', () => {
    expect(childAnswerText({ answer: '{"a":1}', stopReason: 'final_answer', output: { a: 1 } })).toBe(
      '{"a":1}',
    );
    expect(childAnswerText({ answer: 'plain', stopReason: 'final_answer' })).toBe('plain');
    expect(childAnswerText({ answer: 'so far', stopReason: 'max_steps', budget: 'steps 3 of 3' })).toBe(
      '(The sub-agent stopped before it finished: steps 3 of 3. Its summary follows.)\nso far',
    );
    const long = childAnswerText({
      answer: 'x'.repeat(SUB_AGENT_LIMITS.answerChars + 10),
      stopReason: 'final_answer',
    });
    expect(long.length).toBeLessThan(SUB_AGENT_LIMITS.answerChars + 60);
    expect(long).toContain('cut at');
  });
});
