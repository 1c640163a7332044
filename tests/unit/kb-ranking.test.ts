/** Analysis, ranking and snippets of the knowledge base, on small hand-made documents. */
import { analyze, queryTerms } from '../../activities/search/kb/analyze';
import type { Chunk } from '../../activities/search/kb/documents';
import { searchSnapshot } from '../../activities/search/kb/search';
import { analyzeDocument, buildSnapshot } from '../../activities/search/kb/snapshot';
import type { Snapshot } from '../../activities/search/kb/snapshot';
import { markSnippet } from '../../activities/search/kb/snippet';

function snapshot(
  docs: { file: string; title: string; chunks: [heading: string, text: string][] }[],
): Snapshot {
  return buildSnapshot(
    docs.map((d) =>
      analyzeDocument({
        path: `/kb/${d.file}`,
        filename: d.file,
        hash: d.file,
        title: d.title,
        chunks: d.chunks.map(([heading, text], no): Chunk => ({ no, heading, text })),
      }),
    ),
    1,
  );
}

const filler = (topic: string) =>
  `This section explains ${topic} in detail, with examples and the options that change it. `.repeat(3);

describe('analyze', () => {
  it('stems English words, drops stop words and keeps positions', () => {
    expect(analyze('The encoders are encoding entities').map((t) => [t.term, t.pos])).toEqual([
      ['encod', 1],
      ['encod', 3],
      ['entiti', 4],
    ]);
  });

  it('cuts CJK runs into overlapping bigrams beside English words, with offsets into the text', () => {
    const text = 'OrderedMap 由红黑树实现';
    const tokens = analyze(text);
    expect(tokens.map((t) => t.term)).toEqual([
      'orderedmap',
      'order',
      'map',
      '由红',
      '红黑',
      '黑树',
      '树实',
      '实现',
    ]);
    const bigram = tokens.find((t) => t.term === '黑树')!;
    expect(text.slice(bigram.start, bigram.end)).toBe('黑树');
    expect(queryTerms('排序字典')).toEqual(['排序', '序字', '字典']);
    // A lone character is its own term, which documents index beside their bigrams.
    expect(queryTerms('树')).toEqual(['1:树']);
    expect(analyze('红黑树', { cjkUnigrams: true }).map((t) => t.term)).toContain('1:树');
  });
});

describe('ranking', () => {
  it('does not let a word of a document title lift every chunk of that document', () => {
    const snap = snapshot([
      {
        file: 'html-to-text/README.md',
        title: 'html-to-text',
        chunks: [
          ['License', 'MIT licensed. See the LICENSE file for the full text.'],
          ['Installation', 'npm install html-to-text'],
          ['Options', filler('wordwrap and selectors for HTML conversion')],
        ],
      },
      {
        file: 'he/README.md',
        title: 'he',
        chunks: [
          [
            'encode › decimal',
            `Enable the decimal option to use decimal escapes rather than hexadecimal escapes for entities. ${filler('decimal')}`,
          ],
        ],
      },
    ]);
    const hits = searchSnapshot(snap, 'encode HTML entities with decimal escapes instead of hexadecimal', 3);
    expect(hits[0]).toMatchObject({ filename: 'he/README.md' });
  });

  it('ranks a passage that discusses the words above a chunk that only carries them in its heading', () => {
    const snap = snapshot([
      { file: 'a.md', title: 'Links', chunks: [['Byte order mark', 'https://example.test/bom']] },
      {
        file: 'b.md',
        title: 'Decoding',
        chunks: [
          [
            'Decoding',
            `Strip the byte order mark before decoding; a byte order mark at the start marks UTF-8. ${filler('decoding')}`,
          ],
        ],
      },
    ]);
    expect(searchSnapshot(snap, 'byte order mark', 2)[0]).toMatchObject({ filename: 'b.md' });
  });

  it('prefers the words as a phrase over the same words scattered', () => {
    const scattered = `A tree grows by the fence. Someone painted the gate red last spring. A black cat naps. ${filler('gardens')}`;
    const phrase = `The sorted map is a red black tree, so every lookup stays logarithmic in time. ${filler('lookups')}`;
    const snap = snapshot([
      { file: 'scattered.md', title: 'Garden', chunks: [['', scattered]] },
      { file: 'phrase.md', title: 'Structures', chunks: [['', phrase]] },
    ]);
    expect(searchSnapshot(snap, 'red black tree', 2).map((h) => h.filename)).toEqual([
      'phrase.md',
      'scattered.md',
    ]);
  });

  it('finds Chinese passages by Chinese questions, also inside mixed-language documents', () => {
    const snap = snapshot([
      {
        file: 'sdsl/README.zh-CN.md',
        title: '数据结构库',
        chunks: [
          [
            '包含的数据结构',
            '• Stack - 先进后出的堆栈 • Deque - 双端队列 • OrderedMap - 由红黑树实现的排序字典',
          ],
        ],
      },
      {
        file: 'pinyin/README.md',
        title: 'pinyin-pro',
        chunks: [['使用示例', '获取不带音调格式拼音，自动识别多音字。']],
      },
      { file: 'en/README.md', title: 'Sorted map', chunks: [['Usage', filler('sorted dictionaries')]] },
    ]);
    for (const q of ['红黑树实现的排序字典', '堆栈', '排序字典', '树']) {
      expect(searchSnapshot(snap, q, 1)[0]?.filename).toBe('sdsl/README.zh-CN.md');
    }
    expect(searchSnapshot(snap, '拼音 去掉 音调', 1)[0]?.filename).toBe('pinyin/README.md');
    expect(searchSnapshot(snap, 'OrderedMap 排序', 1)[0]?.filename).toBe('sdsl/README.zh-CN.md');
  });
});

describe('snippets', () => {
  it('centre on the best-matching passage and mark the matched words', () => {
    const text = `${'Unrelated introduction text. '.repeat(20)}To strip the BOM, pass stripBOM: true when decoding. ${'More unrelated text. '.repeat(20)}`;
    const snap = snapshot([{ file: 'iconv.md', title: 'iconv', chunks: [['', text]] }]);
    const [hit] = searchSnapshot(snap, 'strip bom decoding', 1);
    expect(hit!.snippet.text.length).toBeLessThanOrEqual(280);
    expect(markSnippet(hit!.snippet, '[', ']')).toContain(
      'To [strip] the [BOM], pass [stripBOM]: true when [decoding].',
    );
    expect(hit!.snippet.text.startsWith('…')).toBe(true);
  });

  it('mark a Chinese match as one stretch, not as overlapping bigrams', () => {
    const snap = snapshot([{ file: 'z.md', title: 'z', chunks: [['', '由红黑树实现的排序字典']] }]);
    const [hit] = searchSnapshot(snap, '排序字典', 1);
    expect(markSnippet(hit!.snippet, '«', '»')).toBe('由红黑树实现的«排序字典»');
  });
});
