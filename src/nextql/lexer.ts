import { NextqlError } from './errors.js';

export type SymbolText = '=' | '!=' | '<' | '<=' | '>' | '>=' | '(' | ')' | '{' | '}' | ',' | ':' | '+';

interface TokenBase {
  readonly start: number;
  readonly end: number;
}

export type Token =
  | (TokenBase & { readonly type: 'key' | 'string' | 'word'; readonly value: string })
  | (TokenBase & { readonly type: 'number'; readonly value: number })
  | (TokenBase & { readonly type: 'symbol'; readonly value: SymbolText })
  | (TokenBase & { readonly type: 'end' });

export const KEYWORDS: ReadonlySet<string> = new Set([
  'and',
  'or',
  'not',
  'in',
  'not_in',
  'contains',
  'not_contains',
  'true',
  'false',
  'null',
  'boost',
  'by',
  'where',
  'if',
  'then',
  'else',
  'map',
  'lambda',
  'string',
]);

const SINGLE_SYMBOLS = new Set(['(', ')', '{', '}', ',', ':', '+']);

const CHARACTER_HINTS: Record<string, string> = {
  '!': " (use 'not', or '!=' for not equal)",
  '&': " (use 'and')",
  '|': " (use 'or')",
};

/**
 * Tokens are scanned on demand, so that an error early in the text is reported before a lexical error
 * further on.
 */
export class Lexer {
  private readonly tokens: Token[] = [];
  private offset = 0;

  constructor(readonly text: string) {}

  token(index: number): Token {
    while (this.tokens.length <= index) {
      const last = this.tokens[this.tokens.length - 1];
      if (last?.type === 'end') return last;
      this.tokens.push(this.scan());
    }
    return this.tokens[index];
  }

  private fail(position: number, reason: string): never {
    throw new NextqlError(this.text, position, reason);
  }

  private scan(): Token {
    const text = this.text;
    while (this.offset < text.length && isWhitespace(text.charCodeAt(this.offset))) this.offset++;
    const start = this.offset;
    if (start >= text.length) return { type: 'end', start, end: start };
    const char = text[start];
    if (char === "'") return this.scanQuoted(start, 'key');
    if (char === '"') return this.scanQuoted(start, 'string');
    if (char === '-' || isDigit(text.charCodeAt(start))) return this.scanNumber(start);
    if (isLetter(text.charCodeAt(start))) {
      let end = start + 1;
      while (end < text.length && isWordPart(text.charCodeAt(end))) end++;
      this.offset = end;
      return { type: 'word', value: text.slice(start, end), start, end };
    }
    return this.scanSymbol(start);
  }

  private scanSymbol(start: number): Token {
    const text = this.text;
    const char = text[start];
    const next = text[start + 1];
    let value: SymbolText;
    if (SINGLE_SYMBOLS.has(char)) value = char as SymbolText;
    else if (char === '=' && next === '=') this.fail(start, "'==' is not an operator (use '=')");
    else if (char === '=') value = '=';
    else if ((char === '<' || char === '>' || char === '!') && next === '=') value = `${char}=` as SymbolText;
    else if (char === '<' || char === '>') value = char;
    else {
      const shown = String.fromCodePoint(text.codePointAt(start) ?? 0);
      this.fail(start, `unexpected character ${quoteText(shown)}${CHARACTER_HINTS[char] ?? ''}`);
    }
    this.offset = start + value.length;
    return { type: 'symbol', value, start, end: this.offset };
  }

  private scanNumber(start: number): Token {
    const text = this.text;
    let end = start;
    if (text[end] === '-') {
      end++;
      if (!isDigit(text.charCodeAt(end)))
        this.fail(start, "expected a digit after '-' (write negative numbers as -5)");
    }
    end = skipDigits(text, end);
    if (text[end] === '.') {
      if (!isDigit(text.charCodeAt(end + 1))) this.fail(end, "expected a digit after '.' in a number");
      end = skipDigits(text, end + 1);
    }
    if (text[end] === 'e' || text[end] === 'E') {
      const exponentStart = end;
      end++;
      if (text[end] === '+' || text[end] === '-') end++;
      if (!isDigit(text.charCodeAt(end)))
        this.fail(exponentStart, 'expected digits in the exponent of a number');
      end = skipDigits(text, end);
    }
    const value = Number(text.slice(start, end));
    if (!Number.isFinite(value)) this.fail(start, 'number out of range');
    this.offset = end;
    return { type: 'number', value, start, end };
  }

  /** Keys allow the escapes \' and \\; strings allow \", \\, \n, \t and \uXXXX. */
  private scanQuoted(start: number, type: 'key' | 'string'): Token {
    const text = this.text;
    const quote = text[start];
    let value = '';
    let index = start + 1;
    for (;;) {
      if (index >= text.length || (text[index] === '\\' && index + 1 >= text.length)) {
        this.fail(start, `unterminated ${type} (missing closing ${quote})`);
      }
      const char = text[index];
      if (char === quote) break;
      if (char !== '\\') {
        value += char;
        index++;
        continue;
      }
      const escaped = text[index + 1];
      if (escaped === quote || escaped === '\\') {
        value += escaped;
        index += 2;
      } else if (type === 'string' && escaped === 'n') {
        value += '\n';
        index += 2;
      } else if (type === 'string' && escaped === 't') {
        value += '\t';
        index += 2;
      } else if (type === 'string' && escaped === 'u') {
        const hex = text.slice(index + 2, index + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail(index, "expected 4 hexadecimal digits after '\\u'");
        value += String.fromCharCode(parseInt(hex, 16));
        index += 6;
      } else {
        const allowed =
          type === 'key' ? "only \\' and \\\\ are allowed in a key" : 'use \\", \\\\, \\n, \\t or \\uXXXX';
        this.fail(index, `invalid escape ${quoteText(`\\${escaped}`)} in a ${type} (${allowed})`);
      }
    }
    this.offset = index + 1;
    return { type, value, start, end: this.offset };
  }
}

function skipDigits(text: string, from: number): number {
  let end = from;
  while (isDigit(text.charCodeAt(end))) end++;
  return end;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isWordPart(code: number): boolean {
  return isLetter(code) || isDigit(code) || code === 95;
}

function isWhitespace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0xfeff;
}

/** Quotes text for a message; control characters are shown as \uXXXX so that messages stay printable. */
export function quoteText(text: string): string {
  let printable = '';
  for (const char of text) {
    const code = char.charCodeAt(0);
    printable += code < 32 || code === 127 ? `\\u${code.toString(16).padStart(4, '0')}` : char;
  }
  return `'${printable}'`;
}
