/** Parsing and chunking of knowledge-base documents. */
import { parseDocument } from '../../activities/search/kb/documents';

describe('parseDocument', () => {
  it('takes a Markdown title from the first # heading and keeps section headings on chunks', () => {
    const md =
      '# Sourdough\n\nIntro text.\n\n## Feeding\n\nFeed it **daily** with [flour](https://x.test).\n\n## Mould\n\nThrow it away.';
    const doc = parseDocument('kitchen/sourdough.md', md, 1000);
    expect(doc.title).toBe('Sourdough');
    expect(doc.chunks).toEqual([
      { no: 0, heading: '', text: 'Intro text.' },
      { no: 1, heading: 'Feeding', text: 'Feed it daily with flour.' },
      { no: 2, heading: 'Mould', text: 'Throw it away.' },
    ]);
  });

  it('does not treat # lines inside code fences as headings', () => {
    const md = '# Git\n\n## Usage\n\n```sh\n# not a heading\ngit rebase main\n```\n';
    const doc = parseDocument('git.md', md, 1000);
    expect(doc.chunks.map((c) => c.heading)).toEqual(['Usage']);
    expect(doc.chunks[0]!.text).toContain('# not a heading');
  });

  it('reads HTML: <title> as the title, headings as sections, without scripts, styles or navigation', () => {
    const html =
      '<html><head><title>Rail &amp; Pass</title><style>p{}</style><script>var secret=1</script></head>' +
      '<body><nav>Home | Travel</nav><h1>Rail Pass</h1><p>Covers <b>most</b> trains.</p>' +
      '<h2>Excluded</h2><p>Nozomi needs a supplement.</p><footer>(c) site</footer></body></html>';
    const doc = parseDocument('travel/pass.html', html, 1000);
    expect(doc.title).toBe('Rail & Pass');
    expect(doc.chunks.map((c) => [c.heading, c.text])).toEqual([
      ['', 'Covers most trains.'],
      ['Excluded', 'Nozomi needs a supplement.'],
    ]);
    const all = doc.chunks.map((c) => c.text).join(' ');
    expect(all).not.toMatch(/secret|Home \| Travel|\(c\) site/);
  });

  it('uses a short first line of a text file as its title, else the file name', () => {
    expect(parseDocument('notes/a.txt', 'Descaling a Kettle\n\nUse vinegar.', 1000).title).toBe(
      'Descaling a Kettle',
    );
    expect(parseDocument('notes/descale-kettle.txt', 'Use vinegar. Then rinse.', 1000).title).toBe(
      'Descale kettle',
    );
  });

  it('packs paragraphs into chunks under the size and splits long paragraphs at sentence ends', () => {
    const sentence = 'This sentence has exactly forty-six characters. ';
    const long = sentence.repeat(30).trim();
    const doc = parseDocument('long.txt', `${long}\n\nShort tail.`, 200);
    expect(doc.chunks.length).toBeGreaterThan(5);
    for (const c of doc.chunks) {
      expect(c.text.length).toBeLessThanOrEqual(200);
      expect(c.text).toMatch(/\.$/);
    }
    expect(doc.chunks.map((c) => c.no)).toEqual(doc.chunks.map((_, i) => i));
  });

  it('cuts a single sentence longer than a chunk without losing text', () => {
    const blob = 'x'.repeat(450);
    const doc = parseDocument('blob.txt', blob, 200);
    expect(doc.chunks.map((c) => c.text.length)).toEqual([200, 200, 50]);
    expect(doc.chunks.map((c) => c.text).join('')).toBe(blob);
  });
});
