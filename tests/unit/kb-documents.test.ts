/** Parsing and chunking of knowledge-base documents. */
import { parseDocument } from '../../activities/search/kb/documents';

describe('parseDocument', () => {
  const para = (words: string) => `${words} `.repeat(20).trim();

  it('takes a Markdown title from the first # heading and keeps section headings on chunks', () => {
    const intro = para('Intro text.');
    const feed = para('Feed it **daily** with [flour](https://x.test).');
    const mould = para('Throw it away.');
    const md = `# Sourdough\n\n${intro}\n\n## Feeding\n\n${feed}\n\n## Mould\n\n${mould}`;
    const doc = parseDocument('kitchen/sourdough.md', md, 1000);
    expect(doc.title).toBe('Sourdough');
    expect(doc.chunks).toEqual([
      { no: 0, heading: '', text: intro },
      { no: 1, heading: 'Feeding', text: para('Feed it daily with flour.') },
      { no: 2, heading: 'Mould', text: mould },
    ]);
  });

  it('keeps a short section with the next one, its heading written into the text', () => {
    const usage = para('Call encode() on the text.');
    const md = `# he\n\n## Installation\n\nnpm install he\n\n## Usage\n\n${usage}`;
    expect(parseDocument('he/README.md', md, 1000).chunks).toEqual([
      { no: 0, heading: 'Installation', text: `npm install he\n\nUsage\n\n${usage}` },
    ]);
  });

  it('titles a README by its first real heading, without badges, images or HTML', () => {
    const badges =
      '# he [![Build status](https://ci.test/he.svg)](https://ci.test/he) [![Coverage][cov-img]][cov-url]\n\n' +
      '[cov-img]: https://cov.test/b.svg\n[cov-url]: https://cov.test\n\n_he_ encodes HTML entities.';
    const he = parseDocument('he/README.md', badges, 1000);
    expect(he.title).toBe('he');
    expect(he.chunks[0]!.text).toBe('he encodes HTML entities.');

    const html =
      '<p align="center"><img src="logo.png" alt="Logo"></p>\n<h1 align="center">\n  <img src="x.svg">\n  Fancy Lib\n</h1>\n\nBody.';
    expect(parseDocument('fancy/README.md', html, 1000).title).toBe('Fancy Lib');
    expect(parseDocument('lib/README.md', 'Setext Title\n============\n\nBody.', 1000).title).toBe(
      'Setext Title',
    );
  });

  it('never titles a document "README": a heading after the prose is a section, the fallback a name', () => {
    const md = 'A tool that minifies code.\n\n# Command line usage\n\nRun it.';
    expect(parseDocument('terser/README.md', md, 1000).title).toBe('Terser');
    expect(parseDocument('terser/README.md', md, 1000, { fallbackTitle: 'terser' }).title).toBe('terser');
    expect(parseDocument('README.md', 'No headings at all.', 1000).title).toBe('Untitled');
  });

  it('names a nested section by its parent and its own heading', () => {
    const body = para('Use decimal escapes.');
    const md = `# he\n\n## API\n\n### he.encode(text)\n\n#### decimal\n\n${body}`;
    expect(parseDocument('he.md', md, 1000).chunks[0]!.heading).toBe('he.encode(text) › decimal');
  });

  it('does not treat # lines inside code fences as headings', () => {
    const md =
      '# Git\n\n## Usage\n\n```sh\n# not a heading\ngit rebase main\n```\n\n## Undo\n\nUse the reflog.';
    const doc = parseDocument('git.md', md, 1000);
    expect(doc.chunks.map((c) => c.heading)).toEqual(['Usage']);
    expect(doc.chunks[0]!.text).toContain('Undo\n\nUse the reflog.');
    expect(doc.chunks[0]!.text).toContain('# not a heading');
  });

  it('reads HTML: <title> as the title, headings as sections, without scripts, styles or navigation', () => {
    const html =
      '<html><head><title>Rail &amp; Pass</title><style>p{}</style><script>var secret=1</script></head>' +
      `<body><nav>Home | Travel</nav><h1>Rail Pass</h1><p>${para('Covers <b>most</b> trains.')}</p>` +
      `<h2>Excluded</h2><p>${para('Nozomi needs a supplement.')}</p><footer>(c) site</footer></body></html>`;
    const doc = parseDocument('travel/pass.html', html, 1000);
    expect(doc.title).toBe('Rail & Pass');
    expect(doc.chunks.map((c) => [c.heading, c.text])).toEqual([
      ['', para('Covers most trains.')],
      ['Excluded', para('Nozomi needs a supplement.')],
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
