/** What the record of answers keeps of one (see AnswerLog): its items, algorithm, scenario and experiment. */
export interface AnswerSummary {
  itemIds: string[];
  /** The items' dense ids, in the same order, when ranking said them (engine/recommender.ts). */
  ids?: number[];
  algorithm: string;
  scenario: string;
  /** The experiment's slug; '' for none. */
  experiment: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const ITEMS_OPEN = '{"items":[';
const ITEM_OPEN = '{"itemId":';

/** The index of the quote that closes the JSON string whose opening quote is at `open`. */
function stringEnd(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote >= 0) {
    // Escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  throw new Error('an answer ends inside a string');
}

/** The index just past the JSON value that starts at `start`. */
function valueEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start) + 1;
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: up to the next separator.
    let i = start;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET) break;
      i++;
    }
    return i;
  }
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
  }
  throw new Error('an answer ends inside an object');
}

/**
 * Reads an answer as rendered (renderList, and renderSearch after it; before its recommId) for what the
 * record keeps, without building its items: parsing the whole answer made a third of what the event-loop
 * thread allocated when serving (bench/latency), and the record only needs each item's id, which
 * rendering puts first (projectItem). The text is JSON.stringify's, with no white space. Throws on a text
 * of another shape.
 */
export function summarizeAnswer(body: string): AnswerSummary {
  if (!body.startsWith(ITEMS_OPEN)) throw new Error('an answer starts with its items');
  const summary: AnswerSummary = { itemIds: [], algorithm: '', scenario: '', experiment: '' };
  let i = ITEMS_OPEN.length;
  while (body.charCodeAt(i) !== CLOSE_BRACKET) {
    if (summary.itemIds.length > 0) {
      if (body.charCodeAt(i) !== COMMA) throw new Error('answer items are separated by commas');
      i++;
    }
    if (!body.startsWith(ITEM_OPEN, i)) throw new Error("an answer's item starts with its itemId");
    const id = i + ITEM_OPEN.length;
    // Parsed, not sliced: a slice would keep the whole answer alive for as long as the id is kept.
    summary.itemIds.push(JSON.parse(body.slice(id, stringEnd(body, id) + 1)) as string);
    i = valueEnd(body, i);
  }
  i++;
  while (i < body.length) {
    if (body.charCodeAt(i) !== COMMA || body.charCodeAt(i + 1) !== QUOTE)
      throw new Error("an answer's fields are separated by commas");
    const keyEnd = stringEnd(body, i + 1);
    const key = body.slice(i + 2, keyEnd);
    const start = keyEnd + 2;
    const end = valueEnd(body, start);
    if (key === 'algorithm') summary.algorithm = JSON.parse(body.slice(start, end)) as string;
    else if (key === 'scenario') summary.scenario = JSON.parse(body.slice(start, end)) as string;
    else if (key === 'experiment')
      summary.experiment = (JSON.parse(body.slice(start, end)) as { slug: string }).slug;
    i = end;
  }
  return summary;
}

/** What summarizeAnswer reads of an answer, or undefined for a text it cannot read. */
export function readAnswerSummary(body: string): AnswerSummary | undefined {
  try {
    return summarizeAnswer(body);
  } catch {
    return undefined;
  }
}
