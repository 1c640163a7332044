/** Citations for people: marks become numbered references with the sources listed. */
import type { Citation, UncitedSearchRecord } from '../../shared/citations';
import { applyCitations, createCitationState, resolveCitations } from '../../shared/citations';
import { citationLocation, formatAnswer, renderCitations } from '../../shared/render-citations';

const kb = (file: string, title: string): UncitedSearchRecord => ({
  title,
  url: `file:///home/me/my%20kb/${file}#chunk-2`,
  text: `Passage of ${title}.`,
  published_date: null,
  source_type: 'file',
  filename: file,
  score: 1,
  score_details: { rank: 1 },
  search_type: 'knowledge_base_search',
  sign: 'a',
});
const web: UncitedSearchRecord = {
  ...kb('x', 'Durable execution'),
  url: 'https://docs.temporal.io/workflows',
  source_type: 'url',
  filename: null,
  search_type: 'web_search',
  sign: 'd',
};

function citations(): Citation[] {
  let state = createCitationState();
  state = applyCitations(state, [kb('garden/tomatoes.md', 'Tomatoes › Blossom end rot'), web]).state;
  state = applyCitations(state, [kb('kitchen/espresso.md', 'Espresso')]).state;
  return resolveCitations(state);
}

describe('renderCitations', () => {
  it('numbers sources by first use, reuses a number for a repeated mark, and lists title and location', () => {
    const r = renderCitations('Calcium [[a1]]. Grind finer [[a3]]; calcium again [[a1]].', citations());
    expect(r.text).toBe('Calcium [1]. Grind finer [2]; calcium again [1].');
    expect(r.citations.map((c) => [c.n, c.index, c.title, c.location])).toEqual([
      [1, 'a1', 'Tomatoes › Blossom end rot', '/home/me/my kb/garden/tomatoes.md'],
      [2, 'a3', 'Espresso', '/home/me/my kb/kitchen/espresso.md'],
    ]);
    expect(formatAnswer(r)).toBe(
      'Calcium [1]. Grind finer [2]; calcium again [1].\n\nSources:\n' +
        '  [1] Tomatoes › Blossom end rot — /home/me/my kb/garden/tomatoes.md\n' +
        '  [2] Espresso — /home/me/my kb/kitchen/espresso.md',
    );
  });

  it('shows a web source by its address, in Markdown as a link', () => {
    const r = renderCitations('Durable [[d2]].', citations());
    expect(r.citations[0]).toMatchObject({ n: 1, location: 'https://docs.temporal.io/workflows' });
    expect(formatAnswer(r, 'markdown')).toBe(
      'Durable [1].\n\n**Sources**\n\n1. [Durable execution](<https://docs.temporal.io/workflows>)',
    );
  });

  it('flags marks that name no source of the run instead of hiding them', () => {
    const r = renderCitations('Made up [[z9]] and real [[a1]].', citations());
    expect(r.text).toBe('Made up [z9?] and real [1].');
    expect(r.unknown).toEqual(['z9']);
    expect(formatAnswer(r)).toContain('(unknown citation marks: z9)');
  });

  it('leaves an answer without marks as it is', () => {
    const r = renderCitations('No sources needed.', citations());
    expect(formatAnswer(r)).toBe('No sources needed.');
    expect(r.citations).toEqual([]);
  });

  it('locates a file by its path even when the URL carries no fragment', () => {
    const record = { ...kb('a.md', 'A'), url: 'file:///srv/docs/a.md', cite_index: 1 };
    expect(citationLocation(record)).toBe('/srv/docs/a.md');
  });
});
