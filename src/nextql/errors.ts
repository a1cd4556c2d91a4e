/** Where an error sits in the expression text: `position` is a 0-based offset, `line` and `column` are 1-based. */
export interface NextqlErrorDetail {
  readonly message: string;
  readonly position: number;
  readonly line: number;
  readonly column: number;
}

/** A parse or type error in a nextQL expression. The message ends with the line and column it refers to. */
export class NextqlError extends Error implements NextqlErrorDetail {
  readonly position: number;
  readonly line: number;
  readonly column: number;

  constructor(text: string, position: number, reason: string) {
    const { line, column } = lineAndColumn(text, position);
    super(`${reason} at line ${line}, column ${column}`);
    this.name = 'NextqlError';
    this.position = position;
    this.line = line;
    this.column = column;
  }

  toDetail(): NextqlErrorDetail {
    return { message: this.message, position: this.position, line: this.line, column: this.column };
  }
}

/** `\n`, `\r\n` and a lone `\r` each end a line; columns count UTF-16 code units, like `position`. */
export function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < position && i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || (code === 13 && text.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}
