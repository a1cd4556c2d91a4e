/** Source extent of a node: `start` inclusive, `end` exclusive, 0-based offsets. A parenthesised node's span includes its parentheses. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

export type ExpressionKind = 'filter' | 'booster' | 'segmentation';

export type LiteralValue = string | number | boolean | null;

export interface Literal {
  readonly kind: 'literal';
  readonly value: LiteralValue;
  readonly span: Span;
}

export interface StringLiteral extends Literal {
  readonly value: string;
}

/** A quoted key such as `'size.eu'`; `name` is the unescaped text between the quotes. */
export interface Key {
  readonly kind: 'key';
  readonly name: string;
  readonly span: Span;
}

/** A lambda variable. */
export interface Identifier {
  readonly kind: 'identifier';
  readonly name: string;
  readonly span: Span;
}

export interface Call {
  readonly kind: 'call';
  readonly name: string;
  readonly args: readonly Operand[];
  readonly span: Span;
}

export type Operand = Key | Literal | Call | Identifier;

export interface SetLiteral {
  readonly kind: 'set';
  readonly elements: readonly Literal[];
  readonly span: Span;
}

export type ComparisonOperator = '=' | '!=' | '<' | '<=' | '>' | '>=';

export interface Comparison {
  readonly kind: 'comparison';
  readonly operator: ComparisonOperator;
  readonly left: Operand;
  readonly right: Operand;
  readonly span: Span;
}

export interface Membership {
  readonly kind: 'membership';
  readonly operator: 'in' | 'not_in';
  readonly operand: Operand;
  readonly set: SetLiteral;
  readonly span: Span;
}

export interface Containment {
  readonly kind: 'containment';
  readonly operator: 'contains' | 'not_contains';
  readonly operand: Operand;
  readonly value: Literal;
  readonly span: Span;
}

/** `true` or `false` standing as a whole condition. */
export interface BooleanConstant {
  readonly kind: 'boolean';
  readonly value: boolean;
  readonly span: Span;
}

export interface Not {
  readonly kind: 'not';
  readonly operand: Condition;
  readonly span: Span;
}

export interface And {
  readonly kind: 'and';
  readonly operands: readonly Condition[];
  readonly span: Span;
}

export interface Or {
  readonly kind: 'or';
  readonly operands: readonly Condition[];
  readonly span: Span;
}

export type Predicate = Comparison | Membership | Containment;

/** The root of a filter, and the `where` / `if` part of boosters and segmentations. */
export type Condition = Predicate | BooleanConstant | Not | And | Or;

export interface Booster {
  readonly kind: 'booster';
  readonly factor: Literal;
  readonly condition: Condition;
  readonly span: Span;
}

export interface Union {
  readonly kind: 'union';
  readonly terms: readonly SetExpression[];
  readonly span: Span;
}

export interface IfThenElse {
  readonly kind: 'if';
  readonly condition: Condition;
  readonly whenTrue: SetExpression;
  readonly whenFalse: SetExpression;
  readonly span: Span;
}

export interface MapSet {
  readonly kind: 'map';
  readonly parameter: Identifier;
  readonly body: ValueExpression;
  readonly source: SetExpression;
  readonly span: Span;
}

/** `string(subject, "format-%s")`. */
export interface Format {
  readonly kind: 'format';
  readonly subject: Key | Identifier;
  readonly format: StringLiteral;
  readonly span: Span;
}

export type ValueExpression = Format | Identifier | Literal;

/** The root of a segmentation expression. */
export type SetExpression = Union | IfThenElse | SetLiteral | Key | MapSet | ValueExpression;

export type Expression = Condition | Booster | SetExpression;
