/**
 * `durable-agent eval` on the committed histories of tests/fixtures/eval (recorded by
 * scripts/record-eval-histories.ts with the scripted model, exported with their content): the
 * recorded model decides every step the same; another one is told apart, and a threshold it misses
 * fails the command; the conversation of each step is the recorded one (tool results, approvals,
 * the runs of a chain that continued as new); the local model decides a recorded step for real.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createProviderSelector } from '../../activities/model';
import type { ModelProvider, ProviderRequest } from '../../activities/model/provider';
import { readBundle } from '../../client/debug/content';
import { readHistoryFile } from '../../client/debug/history';
import type { EvalRunDeps, RunVerdict } from '../../client/eval/eval';
import {
  evalRun,
  parseExpectations,
  recordedModelSteps,
  summarize,
  thresholdMisses,
} from '../../client/eval/eval';
import { parseLocalCards } from '../../client/eval/providers';
import { resolveEvalSources } from '../../client/eval/sources';
import { LOCAL_TOOL_CARDS } from '../../prompts/local-model';
import type { CallModelOutput } from '../../shared/model';
import { PROJECT_ROOT } from '../../shared/project-root';
import { runCli } from '../../testkit/processes';
import { tempDir, testConfig } from '../../testkit/temporal';

const FIXTURES = path.join(PROJECT_ROOT, 'tests', 'fixtures', 'eval');
const fixture = (name: string) => path.join(FIXTURES, name);
const config = testConfig();
const recordedProvider = createProviderSelector({ config });

function evalFile(name: string, deps: Partial<EvalRunDeps> = {}): Promise<RunVerdict> {
  const file = fixture(name);
  const store = readBundle(file);
  if (!store) throw new Error(`${file} has no content bundle`);
  return evalRun(readHistoryFile(file), file, {
    store,
    provider: recordedProvider,
    candidate: {},
    ...deps,
  });
}

/** A provider that keeps what each call was given and answers with a fixed turn. */
function capturing(turn: CallModelOutput): { provider: ModelProvider; requests: ProviderRequest[] } {
  const requests: ProviderRequest[] = [];
  return {
    requests,
    provider: (req) => {
      requests.push(req);
      return Promise.resolve(turn);
    },
  };
}

const ANSWER: CallModelOutput = {
  content: 'done',
  toolCalls: [],
  usage: { inputTokens: 1, outputTokens: 1 },
  finishReason: 'stop',
};

describe('eval with the recorded model', () => {
  test('every step of every committed history is decided the same', async () => {
    const verdicts = await Promise.all(
      ['calculation.json', 'continued-1.json', 'continued-2.json', 'approval.json'].map((f) => evalFile(f)),
    );
    const summary = summarize(verdicts);
    expect(summary).toMatchObject({
      runs: 4,
      steps: 8,
      sameTool: 8,
      argsCompared: 5,
      sameArgs: 5,
      failed: 0,
    });
    expect(verdicts[0]?.steps.map((s) => s.candidate)).toEqual([
      { kind: 'calls', calls: [{ name: 'calculator', arguments: { expression: '23*19' } }] },
      // The scripted answer quotes the tool result: the recorded conversation reached the candidate.
      { kind: 'answer', text: '23 multiplied by 19 is 437.' },
    ]);
    expect(thresholdMisses(summary, { sameTool: 100, sameArgs: 100 })).toEqual([]);
  });

  test('a run that continued as new: each run of the chain has its own steps and the whole conversation', async () => {
    expect(recordedModelSteps(readHistoryFile(fixture('continued-1.json'))).map((s) => s.step)).toEqual([
      1, 2,
    ]);
    const { provider, requests } = capturing(ANSWER);
    const second = await evalFile('continued-2.json', { provider: () => provider });
    expect(second.steps.map((s) => s.step)).toEqual([3, 4]);
    // Step 3 sees the results of the first run's two calls, carried across continue-as-new.
    const step3 = JSON.stringify(requests[0]?.messages);
    expect(step3).toContain('380');
    expect(step3).toContain('1262');
    expect(requests[0]?.messages[0]).toMatchObject({ role: 'system' });
    // Answering where the recording called a tool is told apart.
    expect(second.steps.map((s) => [s.sameTool, s.sameArgs])).toEqual([
      [false, false],
      [true, null],
    ]);
  });

  test('a run with an approval: the approved call’s result is in the next step’s conversation', async () => {
    const { provider, requests } = capturing(ANSWER);
    await evalFile('approval.json', { provider: () => provider });
    expect(requests).toHaveLength(2);
    const step2 = requests[1]?.messages ?? [];
    expect(
      step2.some((m) => m.role === 'tool' && m.name === 'calculator' && m.content.includes('149.7')),
    ).toBe(true);
    expect(JSON.stringify(requests[0]?.messages)).not.toContain('149.7');
  });

  test('another system prompt replaces the recorded one in every step', async () => {
    const { provider, requests } = capturing(ANSWER);
    await evalFile('calculation.json', { provider: () => provider, candidate: { system: 'Be terse.' } });
    for (const r of requests) {
      expect(r.messages.filter((m) => m.role === 'system')).toEqual([
        { role: 'system', content: 'Be terse.' },
      ]);
    }
  });

  test('answers are checked against the expectations file', async () => {
    const good = parseExpectations('[{"task": "multiply 23", "answer": ["\\\\b437\\\\b"]}]', 'e.json');
    const bad = parseExpectations('[{"run": "eval-calculation", "answer": ["\\\\b999\\\\b"]}]', 'e.json');
    const ok = summarize([await evalFile('calculation.json', { expectations: good })]);
    expect(ok).toMatchObject({ answersChecked: 1, answersOk: 1 });
    const wrong = summarize([await evalFile('calculation.json', { expectations: bad })]);
    expect(wrong).toMatchObject({ answersChecked: 1, answersOk: 0 });
    expect(thresholdMisses(wrong, { answers: 100 })).toEqual(['answers 0 % is under the threshold of 100 %']);
    expect(() => parseExpectations('{"answer": []}', 'e.json')).toThrow(/must hold a list/);
    expect(() => parseExpectations('[{"answer": ["x"]}]', 'e.json')).toThrow(/item 1 needs "run".*or "task"/);
    expect(() => parseExpectations('[{"task": "x", "answer": ["("]}]', 'e.json')).toThrow(
      /item 1: Invalid regular/,
    );
  });

  test('sources: a folder of histories, and clear errors for a wrong path', async () => {
    const noClient = () => Promise.reject(new Error('no server in this test'));
    const sources = await resolveEvalSources([FIXTURES], noClient);
    expect(sources.map((s) => path.basename(s.label))).toEqual([
      'approval.json',
      'calculation.json',
      'continued-1.json',
      'continued-2.json',
    ]);
    expect(sources.every((s) => s.bundle)).toBe(true);
    const empty = tempDir('eval-empty');
    await expect(resolveEvalSources([empty], noClient)).rejects.toThrow(/holds no history file/);
    await expect(resolveEvalSources([fixture('calculation.content.json')], noClient)).rejects.toThrow(
      /is a content bundle; give the history file beside it \(.*calculation\.json\)/,
    );
    await expect(resolveEvalSources(['no/such/history.json'], noClient)).rejects.toThrow(
      /no such file or folder/,
    );
    fs.rmSync(empty, { recursive: true, force: true });
  });
});

describe('the eval command', () => {
  test('prints a table per run and a summary; --json for CI', async () => {
    const { code, stdout } = await runCli(['eval', FIXTURES], {});
    expect(code).toBe(0);
    expect(stdout).toMatch(/eval-calculation .*2 model calls, recorded scripted, candidate scripted/);
    expect(stdout).toMatch(
      /1 +calculator \{"expression":"23\*19"\} +calculator \{"expression":"23\*19"\} +✓ +✓/,
    );
    expect(stdout).toContain('4 runs, 8 model calls: same tool 8/8 (100 %), same arguments 5/5 (100 %)');

    const json = await runCli(['eval', fixture('calculation.json'), '--json'], {});
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      summary: { steps: number; sameTool: number };
      misses: string[];
    };
    expect(parsed.summary).toMatchObject({ steps: 2, sameTool: 2 });
    expect(parsed.misses).toEqual([]);
  }, 60_000);

  test('a candidate that decides otherwise misses the threshold and exits non-zero', async () => {
    // The demo script plans a trip: other tools, other arguments, in every run.
    const { code, stdout } = await runCli(
      ['eval', FIXTURES, '--model', 'scripted:demo', '--min-same-tool', '90', '--min-same-args', '90'],
      {},
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/FAILED: same tool \d+ % is under the threshold of 90 %/);
    expect(stdout).toMatch(/FAILED: same arguments 0 % is under the threshold of 90 %/);
    // A history that is not an agent run is named and skipped; the others are still evaluated.
    const other = path.join(tempDir('eval-other'), 'not-an-agent.json');
    fs.writeFileSync(other, '{"events": []}\n');
    const mixed = await runCli(['eval', other, fixture('calculation.json')], {});
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toContain(`${other}: not evaluated: This history is not an agent run`);
    expect(mixed.stdout).toContain('1 run, 2 model calls: same tool 2/2 (100 %)');
    expect(mixed.stdout).toContain('FAILED: 1 of 2 runs could not be evaluated');
    fs.rmSync(path.dirname(other), { recursive: true, force: true });
    const usage = await runCli(['eval', FIXTURES, '--min-same-tool', '120'], {});
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain('must be a percentage from 0 to 100');
  }, 60_000);
});

describe("the local model's cards to try", () => {
  test('a cards file replaces the cards it names and keeps the others; a wrong one says what to fix', async () => {
    const file = path.join(PROJECT_ROOT, 'examples', 'eval', 'swapped-cards.json');
    const cards = parseLocalCards(fs.readFileSync(file, 'utf8'), file);
    expect(cards.calculator?.summary).toBe(LOCAL_TOOL_CARDS.get_time?.summary);
    expect(cards.get_time?.summary).toBe(LOCAL_TOOL_CARDS.calculator?.summary);
    expect(cards.notify_user).toEqual(LOCAL_TOOL_CARDS.notify_user);

    expect(() => parseLocalCards('[]', 'c.json')).toThrow('c.json must hold an object of tool cards');
    expect(() => parseLocalCards('{', 'c.json')).toThrow('c.json is not JSON');
    expect(() => parseLocalCards('{"calculator": {"summary": "sums", "args": {}}}', 'c.json')).toThrow(
      /c\.json, card "calculator": .*example/,
    );
    expect(() =>
      parseLocalCards(
        '{"calculator": {"summary": "sums", "args": {}, "example": {"task": "", "arguments": {}}, "tone": "x"}}',
        'c.json',
      ),
    ).toThrow(/card "calculator": .*tone/);
    // The command refuses such a file before it reads a run or loads a model.
    const bad = path.join(tempDir('eval-cards'), 'bad.json');
    fs.writeFileSync(bad, '{"calculator": {"summary": 3}}');
    const refused = await runCli(['eval', FIXTURES, '--model', 'local', '--local-cards', bad], {});
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`${bad}, card "calculator": `);
    expect(refused.stdout).not.toContain('model calls');
    fs.rmSync(path.dirname(bad), { recursive: true, force: true });
  }, 60_000);
});

const weights = config.models.local.modelPath;
const describeWithWeights = fs.existsSync(weights) ? describe : describe.skip;
if (!fs.existsSync(weights)) console.warn(`SKIPPED the local-model eval: no weights at ${weights}`);

describeWithWeights('eval with the local model', () => {
  // Through the CLI, a process of its own: the model's native runtime is an ES module that a jest
  // process sharing test files cannot import reliably (jest.config.js).
  test('decides a recorded step for real, from the recorded conversation', async () => {
    const { code, stdout, stderr } = await runCli(
      ['eval', fixture('calculation.json'), '--model', 'local', '--json'],
      {},
    );
    expect(stderr).not.toContain('not evaluated');
    expect(code).toBe(0);
    const { runs } = JSON.parse(stdout) as { runs: RunVerdict[] };
    expect(runs[0]?.candidateModel).toBe('local');
    const [first, second] = runs[0]?.steps ?? [];
    expect(first?.error).toBeUndefined();
    expect(first?.candidate).toMatchObject({ kind: 'calls', calls: [{ name: 'calculator' }] });
    expect(first?.sameTool).toBe(true);
    // After the recorded result (437), the second decision is an answer.
    expect(second?.candidate?.kind).toBe('answer');
  }, 180_000);
});
