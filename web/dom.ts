/** A tiny element builder: text goes in as text nodes only, never as HTML. */

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>;

/** `h('button', { type: 'button', onclick: fn }, 'Save')`: attributes, handlers (`on…`), children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, ...children);
  return el;
}

/** Appends children, skipping empty ones. */
export function append(el: Element, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
}

/** The page's content area, marked as loaded. */
export function appRoot(): HTMLElement {
  const root = document.getElementById('app');
  if (!root) throw new Error('The page has no #app element');
  root.removeAttribute('aria-busy');
  root.replaceChildren();
  return root;
}

/** "3 min ago"-style time with the exact time as a tooltip. */
export function timeEl(iso: string): HTMLTimeElement {
  const d = new Date(iso);
  return h('time', { datetime: iso, title: d.toLocaleString() }, d.toLocaleString());
}

/** Shows every `<time datetime>` under `root` in local time (producers write them in UTC). */
export function localizeTimes(root: ParentNode): void {
  for (const t of root.querySelectorAll('time[datetime]')) {
    const d = new Date(t.getAttribute('datetime') ?? '');
    if (Number.isNaN(d.getTime())) continue;
    t.setAttribute('title', d.toLocaleString());
    t.textContent = d.toLocaleString();
  }
}

/** Pretty JSON for people. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}
