/**
 * Inline event handlers taken out of notification HTML before the browser parses it (the page's
 * CSP reports each one it parses): every way the HTML tokenizer reads an attribute, and nothing
 * else changed. The browser side (no CSP report when such an item is drawn) is in
 * tests/e2e/web-ui.test.ts.
 */
import { withoutInlineHandlers } from '../../web/inline-handlers';

test.each([
  ['<img src="x" onerror="window.__xss = 1">', '<img src="x" >'],
  ["<img src=x onerror='a()' alt=y>", '<img src=x  alt=y>'],
  ['<img src=x onerror=alert(1)>', '<img src=x >'],
  ['<IMG SRC=x ONERROR=alert(1)>', '<IMG SRC=x >'],
  ['<img/onerror=alert(1)>', '<img >'],
  ['<b onclick onmouseover="x" class="c">t</b>', '<b   class="c">t</b>'],
  ['<a title="1 > 0" onclick="go()">t</a>', '<a title="1 > 0" >t</a>'],
  ['<svg><animate onbegin="alert(1)" attributeName="x"/></svg>', '<svg><animate  attributeName="x"/></svg>'],
  ['<p\nonclick="x"\nid=a>t</p>', '<p \nid=a>t</p>'],
  ['<img src=x onerror="never closed', '<img src=x '],
  // `<!-->` is a whole comment: what follows is a tag.
  ['<!--><b onclick=1>x</b>-->', '<!--><b >x</b>-->'],
])('%j loses its handlers', (html, expected) => {
  expect(withoutInlineHandlers(html)).toBe(expected);
});

test.each([
  '<p>Largest folders: <b>logs</b></p>',
  'onerror=1 in text, 1 < 2 and 3 > 2',
  '<!-- <img onerror=x> -->',
  '<!DOCTYPE html><?xml x onload=1?>',
  '<a href="https://example.com/?onerror=1" data-note="onclick=x">t</a>',
  '<time datetime="2026-01-01T00:00:00Z">then</time>',
  'a < b',
])('%j stays as it is', (html) => {
  expect(withoutInlineHandlers(html)).toBe(html);
});
