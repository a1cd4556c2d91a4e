import type { Booster, Condition, Expression, ExpressionKind, SetExpression } from './ast.js';
import { parseBoosterSyntax, parseFilterSyntax, parseSegmentationSyntax } from './parser.js';
import { checkBooster, checkFilter, checkSegmentation } from './typecheck.js';

/** Parses and type-checks; throws NextqlError for the first problem found. */
export function parseFilter(text: string): Condition {
  const condition = parseFilterSyntax(text);
  checkFilter(text, condition);
  return condition;
}

export function parseBooster(text: string): Booster {
  const booster = parseBoosterSyntax(text);
  checkBooster(text, booster);
  return booster;
}

export function parseSegmentation(text: string): SetExpression {
  const expression = parseSegmentationSyntax(text);
  checkSegmentation(text, expression);
  return expression;
}

export function parse(text: string, kind: 'filter'): Condition;
export function parse(text: string, kind: 'booster'): Booster;
export function parse(text: string, kind: 'segmentation'): SetExpression;
export function parse(text: string, kind: ExpressionKind): Expression;
export function parse(text: string, kind: ExpressionKind): Expression {
  switch (kind) {
    case 'filter':
      return parseFilter(text);
    case 'booster':
      return parseBooster(text);
    case 'segmentation':
      return parseSegmentation(text);
  }
}
