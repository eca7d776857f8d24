// Tiny DOM builder. Every string becomes a text node or a property (textContent, title, …):
// kernel names, compiler messages and file paths come from outside and must never be parsed as HTML.

type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  title?: string;
  /** Attributes set with setAttribute (aria-*, role, data-*, type). Never `style` or `on*`. */
  attrs?: Record<string, string>;
  hidden?: boolean;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, children: Child[] = []): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  if (props.title !== undefined) el.title = props.title;
  if (props.hidden) el.hidden = true;
  for (const [k, v] of Object.entries(props.attrs ?? {})) el.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/** Replaces an element's children with plain text (no-op when unchanged, to avoid layout work). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function button(text: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = h('button', { class: cls, text, title, attrs: { type: 'button' } });
  b.addEventListener('click', onClick);
  return b;
}
