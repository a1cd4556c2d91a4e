import { NextqlError } from './errors.js';
import { Lexer } from './lexer.js';
import { parseFilter } from './parse.js';

/**
 * The clauses auto-relax can drop: the source text of each top-level `and` operand, trimmed. A filter
 * whose top operator is not `and` is a single clause. Throws NextqlError for an invalid filter.
 */
export function splitFilterClauses(filter: string): string[] {
  const condition = parseFilter(filter);
  if (condition.kind !== 'and') return [filter.trim()];
  return condition.operands.map((operand) => filter.slice(operand.span.start, operand.span.end).trim());
}

/**
 * Rebuilds one filter from clauses, joined with ` and `; a clause whose top operator is an
 * unparenthesised `or` is wrapped in parentheses so that it keeps its meaning.
 */
export function joinFilterClauses(clauses: readonly string[]): string {
  return clauses.map((clause) => (hasTopLevelOr(clause) ? `(${clause})` : clause)).join(' and ');
}

function hasTopLevelOr(clause: string): boolean {
  const lexer = new Lexer(clause);
  let depth = 0;
  try {
    for (let index = 0; ; index++) {
      const token = lexer.token(index);
      if (token.type === 'end') return false;
      if (token.type === 'symbol' && token.value === '(') depth++;
      else if (token.type === 'symbol' && token.value === ')') depth--;
      else if (depth === 0 && token.type === 'word' && token.value === 'or') return true;
    }
  } catch (error) {
    // Text that does not even tokenise keeps its own boundaries when wrapped.
    if (error instanceof NextqlError) return true;
    throw error;
  }
}
