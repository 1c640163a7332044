/**
 * A notification's `detail` is HTML from a producer (an agent, a script): shown only after
 * DOMPurify has removed scripts, event handlers, `javascript:` URLs and anything else that could
 * run. Links open in a new tab without giving that tab a handle on this page. Inline handlers are
 * taken out of the text before DOMPurify parses it, so the page's CSP has none to report.
 */
import DOMPurify from 'dompurify';
import { withoutInlineHandlers } from './inline-handlers';

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** A fragment holding the sanitized HTML. */
export function sanitizedFragment(htmlText: string): DocumentFragment {
  return DOMPurify.sanitize(withoutInlineHandlers(htmlText), {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'],
  });
}
