import type { Api } from './api.js';
import { errorNote, h } from './dom.js';
import type { DateRange } from './format.js';

/** What every panel loads with: who is signed in and the date range the analytics calls cover. */
export interface Context {
  api: Api;
  range: DateRange;
  /** Aborted when a newer load replaces this one (new range, sign-out). */
  signal: AbortSignal;
}

/** Fetches a panel's data, then answers how to draw it into the panel's (attached, empty) body. */
export type Loader = (context: Context) => Promise<(body: HTMLElement) => void>;

/**
 * Loads one panel on its own: its failure shows in it and nowhere else. `data-state` on the panel
 * (`loading`, `ready`, `error`) tells tests and styles where it is.
 */
export async function loadPanel(panel: HTMLElement, loader: Loader, context: Context): Promise<void> {
  const body = panel.querySelector<HTMLElement>('.panel-body') ?? panel;
  panel.dataset.state = 'loading';
  panel.setAttribute('aria-busy', 'true');
  try {
    const paint = await loader(context);
    if (context.signal.aborted) return;
    body.replaceChildren();
    paint(body);
    panel.dataset.state = 'ready';
  } catch (error) {
    if (context.signal.aborted) return;
    const name = panel.dataset.panel ?? 'panel';
    body.replaceChildren(errorNote((error as Error).message, `${name}-error`));
    panel.dataset.state = 'error';
  } finally {
    if (!context.signal.aborted) panel.removeAttribute('aria-busy');
  }
}

/** A canvas for a chart, in a box whose size the stylesheet sets (Chart.js fills its parent). */
export function chartBox(testId: string, label: string): { box: HTMLElement; canvas: HTMLCanvasElement } {
  const canvas = h('canvas', { 'data-testid': testId, role: 'img', 'aria-label': label });
  return { box: h('div', { class: 'chart' }, canvas), canvas };
}
