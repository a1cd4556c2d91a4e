/**
 * Small DOM helpers. Text always goes in through `textContent`, never as HTML, so nothing the API
 * answers (item ids, scenario names) can become markup.
 */

type Attributes = Record<string, string | undefined>;
type Child = Node | string | null | undefined | false;

/** An element with attributes (`class`, `data-*`, …) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** A number or text cell that tests can find by its `data-testid`. */
export function figure(label: string, value: string, testId: string): HTMLElement {
  return h(
    'div',
    { class: 'figure' },
    h('div', { class: 'figure-value', 'data-testid': testId }, value),
    h('div', { class: 'figure-label' }, label),
  );
}

export interface Column<T> {
  label: string;
  /** Right-aligned when numeric. */
  numeric?: boolean;
  cell: (row: T) => string | Node;
  testId?: (row: T) => string;
}

/** A table of rows; an empty list says so instead of showing an empty table. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[], testId: string, empty: string) {
  if (rows.length === 0) return h('p', { class: 'empty', 'data-testid': testId }, empty);
  const head = h('tr', {}, ...columns.map((c) => h('th', { class: c.numeric ? 'num' : undefined }, c.label)));
  const body = rows.map((row) =>
    h(
      'tr',
      {},
      ...columns.map((c) =>
        h('td', { class: c.numeric ? 'num' : undefined, 'data-testid': c.testId?.(row) }, c.cell(row)),
      ),
    ),
  );
  // Wide tables scroll inside their card rather than widening the page.
  return h(
    'div',
    { class: 'table-wrap' },
    h('table', { 'data-testid': testId }, h('thead', {}, head), h('tbody', {}, ...body)),
  );
}

/** A line telling what a section could not load, in place of its content. */
export function errorNote(message: string, testId?: string): HTMLElement {
  return h('p', { class: 'error', role: 'alert', 'data-testid': testId }, message);
}
