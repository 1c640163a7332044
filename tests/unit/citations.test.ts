/** Citation numbering: unique indexes across calls, dedupe, lean content, resolving marks. */
import type { LeanSearchResult, UncitedSearchRecord } from '../../shared/citations';
import {
  CITATION_SNIPPET_CHARS,
  applyCitations,
  boundCitationState,
  citationsInText,
  createCitationState,
  findCitation,
  renderSearchPicks,
  resolveCitations,
  searchRecordsOf,
} from '../../shared/citations';

function web(url: string, sign = 'd', text = `text of ${url}`): UncitedSearchRecord {
  return {
    title: `Title ${url}`,
    url,
    text,
    published_date: null,
    source_type: 'url',
    filename: null,
    score: 0.5,
    score_details: { rank: 1 },
    search_type: 'web_search',
    sign,
  };
}

function kb(file: string, chunk: number): UncitedSearchRecord {
  return {
    title: `Doc ${file}`,
    url: `file:///kb/${file}#chunk-${chunk}`,
    text: `chunk ${chunk} of ${file}`,
    published_date: null,
    source_type: 'file',
    filename: file,
    score: 1,
    score_details: { rank: 1, chunk },
    search_type: 'knowledge_base_search',
    sign: 'a',
  };
}

const lean = (content: string) => JSON.parse(content) as LeanSearchResult[];

describe('applyCitations', () => {
  it('numbers results from 1 and keeps counting across calls and signs (one global counter)', () => {
    let state = createCitationState();
    const first = applyCitations(state, [kb('a.md', 0), kb('b.md', 1)]);
    state = first.state;
    const second = applyCitations(state, [web('https://x.test/1'), web('https://x.test/2', 'r')]);
    state = second.state;
    const third = applyCitations(state, [kb('c.md', 0)]);

    expect(lean(first.content).map((r) => r.index)).toEqual(['a1', 'a2']);
    expect(lean(second.content).map((r) => r.index)).toEqual(['d3', 'r4']);
    expect(lean(third.content).map((r) => r.reference_mark)).toEqual(['[[a5]]']);
    expect(third.state.next).toBe(6);
    expect(resolveCitations(third.state).map((c) => c.index)).toEqual(['a1', 'a2', 'd3', 'r4', 'a5']);
  });

  it('gives a result seen earlier in the run its earlier index, and stores it once', () => {
    const one = applyCitations(createCitationState(), [
      web('https://x.test/page'),
      web('https://x.test/other'),
    ]);
    const two = applyCitations(one.state, [web('https://X.TEST/page/#section'), web('https://x.test/new')]);
    expect(lean(two.content).map((r) => r.index)).toEqual(['d1', 'd3']);
    expect(two.records.map((r) => r.cite_index)).toEqual([1, 3]);
    expect(two.state.records).toHaveLength(3);
  });

  it('merges duplicates within one call into the first (best-ranked) occurrence', () => {
    const r = applyCitations(createCitationState(), [
      web('https://x.test/a', 'd', 'from tavily'),
      web('https://x.test/a/', 'x', 'from exa'),
      web('https://x.test/b', 'x'),
    ]);
    expect(lean(r.content).map((l) => [l.index, l.text])).toEqual([
      ['d1', 'from tavily'],
      ['x2', 'text of https://x.test/b'],
    ]);
  });

  it('treats different chunks of one file as different sources, and the same chunk as one', () => {
    const one = applyCitations(createCitationState(), [kb('a.md', 0), kb('a.md', 1)]);
    const two = applyCitations(one.state, [kb('a.md', 1)]);
    expect(lean(one.content).map((r) => r.index)).toEqual(['a1', 'a2']);
    expect(lean(two.content).map((r) => r.index)).toEqual(['a2']);
  });

  it('builds the lean model view with only title, text, index and reference_mark', () => {
    const r = applyCitations(createCitationState(), [web('https://x.test/a')]);
    expect(lean(r.content)).toEqual([
      {
        title: 'Title https://x.test/a',
        text: 'text of https://x.test/a',
        index: 'd1',
        reference_mark: '[[d1]]',
      },
    ]);
    expect(r.records[0]).toMatchObject({ url: 'https://x.test/a', cite_index: 1, sign: 'd', score: 0.5 });
  });

  it('caps long text at a word boundary for the model, and keeps a shorter snippet in the run', () => {
    const long = 'word '.repeat(1000).trim();
    const r = applyCitations(createCitationState(), [web('https://x.test/a', 'd', long)], {
      maxTextChars: 1000,
    });
    const text = lean(r.content)[0]!.text;
    expect(text.length).toBeLessThanOrEqual(1000);
    expect(text.endsWith('word…')).toBe(true);
    const snippet = r.state.records[0]!.text;
    expect(snippet.length).toBeLessThanOrEqual(CITATION_SNIPPET_CHARS);
    expect(snippet.endsWith('word…')).toBe(true);
    expect(text.startsWith(snippet.slice(0, -1))).toBe(true);
  });

  it('picks say which given record each result came from, so the content renders again from them', () => {
    const records = [
      web('https://x.test/a', 'd', 'alpha'),
      web('https://x.test/a#frag', 'd', 'alpha again'),
      web('https://x.test/b', 'd', 'beta'),
    ];
    const first = applyCitations(createCitationState(), [web('https://x.test/b', 'd', 'beta')]);
    const r = applyCitations(first.state, records);
    expect(r.picks).toEqual([
      [0, 'd2'],
      [2, 'd1'],
    ]);
    expect(renderSearchPicks(records, r.picks)).toBe(r.content);
  });

  it('a citation state over its budget loses the oldest snippets first, then the oldest citations', () => {
    let state = createCitationState();
    for (let i = 0; i < 200; i++)
      state = applyCitations(state, [web(`https://x.test/${i}`, 'd', 'text '.repeat(100))]).state;
    const full = Buffer.byteLength(JSON.stringify(state));
    const stripped = boundCitationState(state, full - 1000);
    expect(stripped.records).toHaveLength(200);
    expect(stripped.records[0]!.text).toBe('');
    expect(stripped.records.at(-1)!.text).not.toBe('');
    expect(Buffer.byteLength(JSON.stringify(stripped))).toBeLessThanOrEqual(full - 1000);
    const dropped = boundCitationState(state, 10_000);
    expect(Buffer.byteLength(JSON.stringify(dropped))).toBeLessThanOrEqual(10_000);
    expect(dropped.dropped).toBe(200 - dropped.records.length);
    expect(dropped.records.at(-1)!.cite_index).toBe(200);
    expect(dropped.next).toBe(201);
    expect(boundCitationState(state, full)).toBe(state);
  });

  it('tells the model to try a shorter or broader query when nothing was found, and numbers nothing', () => {
    const state = createCitationState();
    const r = applyCitations(state, [], { query: 'zebra quantum tax' });
    expect(r.content).toMatch(/No results found for "zebra quantum tax"\. Try a shorter or broader query/);
    expect(r.records).toEqual([]);
    expect(r.state).toEqual({ next: 1, records: [] });
  });

  it('does not modify the state it is given (workflow state is replaced, not mutated)', () => {
    const state = createCitationState();
    const snapshot = JSON.stringify(state);
    applyCitations(state, [web('https://x.test/a')]);
    expect(JSON.stringify(state)).toBe(snapshot);
  });

  it('keeps state as plain JSON that survives a round trip (continue-as-new)', () => {
    const one = applyCitations(createCitationState(), [web('https://x.test/a'), kb('a.md', 2)]);
    const carried = JSON.parse(JSON.stringify(one.state)) as typeof one.state;
    const two = applyCitations(carried, [web('https://x.test/a'), web('https://x.test/b')]);
    expect(lean(two.content).map((r) => r.index)).toEqual(['d1', 'd3']);
  });
});

describe('resolving citations', () => {
  const { state } = applyCitations(createCitationState(), [kb('policy.md', 0), web('https://x.test/a')]);

  it('finds a record by number, index or mark, and refuses a mark whose letter is wrong', () => {
    expect(findCitation(state, 1)?.filename).toBe('policy.md');
    expect(findCitation(state, 'd2')?.url).toBe('https://x.test/a');
    expect(findCitation(state, '[[a1]]')?.filename).toBe('policy.md');
    expect(findCitation(state, 'a2')).toBeUndefined();
    expect(findCitation(state, 'a9')).toBeUndefined();
    expect(findCitation(state, 'nonsense')).toBeUndefined();
  });

  it('lists the citations an answer uses, once each, and the marks that resolve to nothing', () => {
    const answer = 'Hotels cost up to 180 EUR [[a1]]; see also [[d2]] and again [[a1]], but not [[z7]].';
    const { cited, unknown } = citationsInText(state, answer);
    expect(cited.map((c) => [c.index, c.record.cite_index])).toEqual([
      ['a1', 1],
      ['d2', 2],
    ]);
    expect(unknown).toEqual(['z7']);
  });
});

describe('searchRecordsOf', () => {
  it('reads the records of a search activity result and rejects anything else', () => {
    expect(searchRecordsOf({ records: [web('https://x.test/a')] })).toHaveLength(1);
    expect(searchRecordsOf({ value: 3 })).toBeUndefined();
    expect(searchRecordsOf({ records: [{ title: 'no url' }] })).toBeUndefined();
    expect(searchRecordsOf(undefined)).toBeUndefined();
  });
});
