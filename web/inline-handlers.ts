/**
 * Inline event handler attributes (`onerror=…`, `onclick`, …) taken out of HTML text before any
 * parser reads it. The pages' CSP refuses inline handlers, and Chromium reports each one it parses
 * as a console error, even in a detached document where nothing can run (DOMPurify parses there):
 * so a notification whose detail holds `<img onerror=…>` logged errors each time it was drawn.
 *
 * This is not the sanitizer: DOMPurify still runs on what comes out. A tag read here differently
 * from the browser is at worst reported again, never let through.
 */

/** A start or end tag's `<`, name and what follows up to the first attribute. */
const TAG = /<\/?[A-Za-z][^\t\n\f\r />]*/y;
/**
 * One attribute with the separators before it, as the HTML tokenizer reads it: a name (whose first
 * character may be `=`), then optionally `=` and a double-quoted, single-quoted or unquoted value.
 */
const ATTRIBUTE =
  /[\t\n\f\r /]*([^\t\n\f\r />][^\t\n\f\r />=]*)(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"[^"]*"?|'[^']*'?|[^\t\n\f\r >]*))?/y;
/** What closes a tag after its last attribute. */
const TAG_END = /[\t\n\f\r /]*>?/y;

/** Where the comment that opens at `start` (`<!--`) ends, as the HTML tokenizer reads it. */
function commentEnd(html: string, start: number): number {
  const body = start + 4;
  // `<!-->` and `<!--->` are whole (empty) comments.
  if (html.startsWith('>', body)) return body + 1;
  if (html.startsWith('->', body)) return body + 2;
  const ends = [html.indexOf('-->', body), html.indexOf('--!>', body)].filter((i) => i >= 0);
  if (ends.length === 0) return html.length;
  const at = Math.min(...ends);
  return at + (html.startsWith('-->', at) ? 3 : 4);
}

/** `html` without the inline event handler attributes of its tags; everything else as it was. */
export function withoutInlineHandlers(html: string): string {
  let out = '';
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) return out + html.slice(i);
    out += html.slice(i, lt);
    i = lt;
    if (html.startsWith('<!--', i)) {
      const end = commentEnd(html, i);
      out += html.slice(i, end);
      i = end;
      continue;
    }
    TAG.lastIndex = i;
    const tag = TAG.exec(html);
    if (!tag) {
      // `<!…>`, `<?…>` and `</…>` not followed by a letter hold no attributes; a lone `<` is text.
      const bogus = /^<(?:[!?]|\/[^A-Za-z>])/.test(html.slice(i, i + 3));
      const end = bogus ? html.indexOf('>', i) : -1;
      const stop = bogus ? (end < 0 ? html.length : end + 1) : i + 1;
      out += html.slice(i, stop);
      i = stop;
      continue;
    }
    out += tag[0];
    let j = TAG.lastIndex;
    for (;;) {
      ATTRIBUTE.lastIndex = j;
      const attribute = ATTRIBUTE.exec(html);
      if (!attribute) break;
      // A space keeps the attributes on either side apart.
      out += /^on/i.test(attribute[1] ?? '') ? ' ' : attribute[0];
      j = ATTRIBUTE.lastIndex;
    }
    TAG_END.lastIndex = j;
    const close = TAG_END.exec(html);
    out += close?.[0] ?? '';
    i = TAG_END.lastIndex;
  }
  return out;
}
