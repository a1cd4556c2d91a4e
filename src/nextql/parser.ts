import type {
  Booster,
  Call,
  ComparisonOperator,
  Condition,
  Format,
  Identifier,
  Key,
  Literal,
  Operand,
  SetExpression,
  SetLiteral,
  Span,
  StringLiteral,
  ValueExpression,
} from './ast.js';
import { NextqlError, lineAndColumn } from './errors.js';
import { KEYWORDS, Lexer, quoteText, type SymbolText, type Token } from './lexer.js';

/** Syntax only: see typecheck.ts for what is checked afterwards. */
export function parseFilterSyntax(text: string): Condition {
  const parser = new Parser(text);
  const condition = parser.condition();
  parser.expectEnd("'and', 'or' or the end of the filter");
  return condition;
}

export function parseBoosterSyntax(text: string): Booster {
  const parser = new Parser(text);
  const booster = parser.booster();
  parser.expectEnd("'and', 'or' or the end of the booster");
  return booster;
}

export function parseSegmentationSyntax(text: string): SetExpression {
  const parser = new Parser(text);
  const expression = parser.setExpression();
  parser.expectEnd("'+' or the end of the segmentation expression");
  return expression;
}

const COMPARISON_OPERATORS: ReadonlySet<string> = new Set(['=', '!=', '<', '<=', '>', '>=']);
const OPERATOR_LIST = '=, !=, <, <=, >, >=, in, not_in, contains or not_contains';
/** Bounds recursion, so that hostile input gets an error rather than a stack overflow. */
const MAX_NESTING = 100;

class Parser {
  private readonly lexer: Lexer;
  private index = 0;
  private depth = 0;

  constructor(private readonly text: string) {
    this.lexer = new Lexer(text);
  }

  condition(): Condition {
    const first = this.conjunction();
    if (!this.atWord('or')) return first;
    const operands = [first];
    while (this.atWord('or')) {
      this.advance();
      operands.push(this.conjunction());
    }
    return { kind: 'or', operands, span: spanOf(first, operands[operands.length - 1]) };
  }

  booster(): Booster {
    const start = this.peek().start;
    this.expectWord('boost', "'boost' (a booster reads: boost by <factor> where <condition>)");
    this.expectWord('by', "'by'");
    const factor = this.literal('a number');
    this.expectWord('where', "'where'");
    const condition = this.condition();
    return { kind: 'booster', factor, condition, span: { start, end: condition.span.end } };
  }

  setExpression(): SetExpression {
    const first = this.setTerm();
    if (!this.atSymbol('+')) return first;
    const terms = [first];
    while (this.atSymbol('+')) {
      this.advance();
      terms.push(this.setTerm());
    }
    return { kind: 'union', terms, span: spanOf(first, terms[terms.length - 1]) };
  }

  expectEnd(expected: string): void {
    if (this.peek().type !== 'end') this.fail(`expected ${expected}`, false);
  }

  private conjunction(): Condition {
    const first = this.unary();
    if (!this.atWord('and')) return first;
    const operands = [first];
    while (this.atWord('and')) {
      this.advance();
      operands.push(this.unary());
    }
    return { kind: 'and', operands, span: spanOf(first, operands[operands.length - 1]) };
  }

  private unary(): Condition {
    const token = this.peek();
    if (this.atWord('not')) {
      this.advance();
      const operand = this.nested(() => this.unary());
      return { kind: 'not', operand, span: { start: token.start, end: operand.span.end } };
    }
    if (this.atSymbol('(')) {
      this.advance();
      const inner = this.nested(() => this.condition());
      const close = this.closeParenthesis(token, "'and', 'or' or ')'");
      return { ...inner, span: { start: token.start, end: close.end } };
    }
    if ((this.atWord('true') || this.atWord('false')) && !startsPredicateTail(this.peek(1))) {
      this.advance();
      return {
        kind: 'boolean',
        value: token.type === 'word' && token.value === 'true',
        span: spanOfToken(token),
      };
    }
    return this.predicate();
  }

  private predicate(): Condition {
    const operand = this.operand('a condition');
    const token = this.peek();
    if (token.type === 'symbol' && COMPARISON_OPERATORS.has(token.value)) {
      this.advance();
      const right = this.operand('a value');
      return {
        kind: 'comparison',
        operator: token.value as ComparisonOperator,
        left: operand,
        right,
        span: spanOf(operand, right),
      };
    }
    if (this.atWord('in') || this.atWord('not_in')) {
      this.advance();
      const set = this.setLiteral('a set literal like {"a", "b"}');
      const operator = token.type === 'word' && token.value === 'in' ? 'in' : 'not_in';
      return { kind: 'membership', operator, operand, set, span: spanOf(operand, set) };
    }
    if (this.atWord('contains') || this.atWord('not_contains')) {
      this.advance();
      const value = this.literal('a literal value');
      const operator = token.type === 'word' && token.value === 'contains' ? 'contains' : 'not_contains';
      return { kind: 'containment', operator, operand, value, span: spanOf(operand, value) };
    }
    const hint = this.atWord('not')
      ? " (use 'not_in' or 'not_contains', or put 'not' before the condition)"
      : '';
    return this.fail(`expected an operator (${OPERATOR_LIST})`, true, hint);
  }

  private operand(expected: string): Operand {
    const token = this.peek();
    if (token.type === 'key') {
      this.advance();
      return { kind: 'key', name: token.value, span: spanOfToken(token) };
    }
    if (token.type === 'word' && !KEYWORDS.has(token.value)) {
      const name = this.identifier(expected);
      return this.atSymbol('(') ? this.nested(() => this.call(name)) : name;
    }
    if (isLiteralToken(token)) return this.literal(expected);
    return this.fail(`expected ${expected}`, true);
  }

  private call(name: Identifier): Call {
    this.advance();
    const args: Operand[] = [];
    if (!this.atSymbol(')')) {
      args.push(this.operand("an argument or ')'"));
      while (this.atSymbol(',')) {
        this.advance();
        args.push(this.operand('an argument'));
      }
    }
    const close = this.expectSymbol(')', "',' or ')'");
    return { kind: 'call', name: name.name, args, span: { start: name.span.start, end: close.end } };
  }

  private literal(expected: string): Literal {
    const token = this.peek();
    if (!isLiteralToken(token)) return this.fail(`expected ${expected}`, true);
    this.advance();
    return { kind: 'literal', value: literalValue(token), span: spanOfToken(token) };
  }

  private stringLiteral(expected: string): StringLiteral {
    const token = this.peek();
    if (token.type !== 'string') return this.fail(`expected ${expected}`, true);
    this.advance();
    return { kind: 'literal', value: token.value, span: spanOfToken(token) };
  }

  private setLiteral(expected: string): SetLiteral {
    const open = this.expectSymbol('{', expected);
    const elements: Literal[] = [];
    if (!this.atSymbol('}')) {
      elements.push(this.literal("a literal or '}'"));
      while (this.atSymbol(',')) {
        this.advance();
        elements.push(this.literal('a literal'));
      }
    }
    const close = this.expectSymbol('}', "',' or '}'");
    return { kind: 'set', elements, span: { start: open.start, end: close.end } };
  }

  private setTerm(): SetExpression {
    return this.nested(() => this.setTermAt());
  }

  private setTermAt(): SetExpression {
    const token = this.peek();
    if (this.atWord('if')) {
      this.advance();
      const condition = this.condition();
      this.expectWord('then', "'then' (or 'and', 'or')");
      const whenTrue = this.setExpression();
      this.expectWord('else', "'else' (or '+')");
      const whenFalse = this.setExpression();
      return {
        kind: 'if',
        condition,
        whenTrue,
        whenFalse,
        span: { start: token.start, end: whenFalse.span.end },
      };
    }
    if (this.atSymbol('{')) return this.setLiteral('a set');
    if (token.type === 'key') {
      this.advance();
      return { kind: 'key', name: token.value, span: spanOfToken(token) };
    }
    if (this.atWord('map')) return this.map();
    if (this.atSymbol('(')) {
      this.advance();
      const inner = this.setExpression();
      const close = this.closeParenthesis(token, "'+' or ')'");
      return { ...inner, span: { start: token.start, end: close.end } };
    }
    return this.valueExpression('a set expression ({...}, a key, if, map, string() or a literal)');
  }

  private map(): SetExpression {
    const start = this.peek().start;
    this.advance();
    this.expectSymbol('(', "'('");
    this.expectWord('lambda', "'lambda'");
    const parameter = this.identifier('a variable name');
    this.expectSymbol(':', "':'");
    const body = this.valueExpression('a value (string(...), the variable or a literal)');
    this.expectSymbol(',', "','");
    const source = this.setExpression();
    const close = this.expectSymbol(')', "'+' or ')'");
    return { kind: 'map', parameter, body, source, span: { start, end: close.end } };
  }

  private valueExpression(expected: string): ValueExpression {
    const token = this.peek();
    if (this.atWord('string')) return this.format();
    if (token.type === 'word' && !KEYWORDS.has(token.value)) return this.identifier(expected);
    if (isLiteralToken(token)) return this.literal(expected);
    return this.fail(`expected ${expected}`, true);
  }

  private format(): Format {
    const start = this.peek().start;
    this.advance();
    this.expectSymbol('(', "'('");
    const token = this.peek();
    let subject: Key | Identifier;
    if (token.type === 'key') {
      this.advance();
      subject = { kind: 'key', name: token.value, span: spanOfToken(token) };
    } else {
      subject = this.identifier('a key or a lambda variable');
    }
    this.expectSymbol(',', "','");
    const format = this.stringLiteral('a format string like "prefix-%s"');
    const close = this.expectSymbol(')', "')'");
    return { kind: 'format', subject, format, span: { start, end: close.end } };
  }

  private identifier(expected: string): Identifier {
    const token = this.peek();
    if (token.type !== 'word' || KEYWORDS.has(token.value)) return this.fail(`expected ${expected}`, true);
    this.advance();
    return { kind: 'identifier', name: token.value, span: spanOfToken(token) };
  }

  private closeParenthesis(open: Token, expected: string): Token {
    if (this.atSymbol(')')) return this.advance();
    const { line, column } = lineAndColumn(this.text, open.start);
    return this.fail(`expected ${expected} to close the '(' at line ${line}, column ${column}`, false);
  }

  private expectWord(word: string, expected: string): Token {
    if (this.atWord(word)) return this.advance();
    return this.fail(`expected ${expected}`, true);
  }

  private expectSymbol(symbol: SymbolText, expected: string): Token {
    if (this.atSymbol(symbol)) return this.advance();
    return this.fail(`expected ${expected}`, true);
  }

  private nested<T>(parse: () => T): T {
    if (this.depth >= MAX_NESTING) {
      throw new NextqlError(
        this.text,
        this.peek().start,
        `the expression nests more than ${MAX_NESTING} levels deep`,
      );
    }
    this.depth++;
    const result = parse();
    this.depth--;
    return result;
  }

  private peek(ahead = 0): Token {
    return this.lexer.token(this.index + ahead);
  }

  private advance(): Token {
    const token = this.peek();
    this.index++;
    return token;
  }

  private atWord(word: string): boolean {
    const token = this.peek();
    return token.type === 'word' && token.value === word;
  }

  private atSymbol(symbol: SymbolText): boolean {
    const token = this.peek();
    return token.type === 'symbol' && token.value === symbol;
  }

  /** Reports what was expected, after which token (when `mentionPrevious`), and what was found instead. */
  private fail(expected: string, mentionPrevious: boolean, hint = ''): never {
    const found = this.peek();
    const after =
      mentionPrevious && this.index > 0 ? ` after ${this.describe(this.lexer.token(this.index - 1))}` : '';
    const keywordHint =
      found.type === 'word' &&
      found.value !== found.value.toLowerCase() &&
      KEYWORDS.has(found.value.toLowerCase())
        ? ` (keywords are lowercase: '${found.value.toLowerCase()}')`
        : '';
    const position = found.type === 'end' ? this.text.length : found.start;
    throw new NextqlError(
      this.text,
      position,
      `${expected}${after}, found ${this.describeFound(found)}${hint}${keywordHint}`,
    );
  }

  private describe(token: Token): string {
    const source = truncate(this.text.slice(token.start, token.end));
    return token.type === 'key' || token.type === 'string' ? source : quoteText(source);
  }

  private describeFound(token: Token): string {
    switch (token.type) {
      case 'end':
        return 'end of input';
      case 'key':
        return `key ${this.describe(token)}`;
      case 'string':
        return `string ${this.describe(token)}`;
      case 'number':
        return `number ${truncate(this.text.slice(token.start, token.end))}`;
      default:
        return this.describe(token);
    }
  }
}

function truncate(source: string): string {
  return source.length > 40 ? `${source.slice(0, 37)}...` : source;
}

function isLiteralToken(token: Token): boolean {
  if (token.type === 'string' || token.type === 'number') return true;
  return (
    token.type === 'word' && (token.value === 'true' || token.value === 'false' || token.value === 'null')
  );
}

function literalValue(token: Token): Literal['value'] {
  if (token.type === 'string' || token.type === 'number') return token.value;
  if (token.type === 'word' && token.value === 'null') return null;
  return token.type === 'word' && token.value === 'true';
}

/** `true`/`false` open a predicate (`true = 'flag'`) only when an operator follows them. */
function startsPredicateTail(token: Token): boolean {
  if (token.type === 'symbol') return COMPARISON_OPERATORS.has(token.value);
  return token.type === 'word' && ['in', 'not_in', 'contains', 'not_contains'].includes(token.value);
}

function spanOf(first: { span: Span }, last: { span: Span }): Span {
  return { start: first.span.start, end: last.span.end };
}

function spanOfToken(token: Token): Span {
  return { start: token.start, end: token.end };
}
