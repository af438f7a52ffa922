// A small arithmetic language for calc_eval, parsed by recursive descent (never eval).
// Kept hand-written rather than a math library (mathjs, expr-eval): the model's input is
// untrusted, and this grammar has no assignment, objects or functions beyond the list
// below, bounds nesting depth and input size (CALC_LIMITS), and names the position of
// every error — what a general-purpose evaluator would have to be fenced in to give.
//
//   expression := sum
//   sum        := product (('+' | '-') product)*
//   product    := unary (('*' | '/' | '%') unary)*
//   unary      := ('+' | '-') unary | power
//   power      := postfix ('^' unary)?          right-associative, binds tighter than unary
//   postfix    := primary '!'*
//   primary    := number | constant | function '(' args ')' | '(' expression ')'

export class CalcError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(`${message} at position ${position + 1}`);
    this.name = 'CalcError';
    this.position = position;
  }
}

const CALC_LIMITS = { maxLength: 1000, maxDepth: 64, maxFactorial: 170 } as const;

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

type CalcFunction = { arity: [number, number]; apply: (args: number[]) => number };

function unary(apply: (value: number) => number): CalcFunction {
  return { arity: [1, 1], apply: (args) => apply(args[0] as number) };
}

const FUNCTIONS: Record<string, CalcFunction> = {
  sqrt: unary(Math.sqrt),
  cbrt: unary(Math.cbrt),
  abs: unary(Math.abs),
  floor: unary(Math.floor),
  ceil: unary(Math.ceil),
  trunc: unary(Math.trunc),
  sign: unary(Math.sign),
  exp: unary(Math.exp),
  ln: unary(Math.log),
  log10: unary(Math.log10),
  log2: unary(Math.log2),
  sin: unary(Math.sin),
  cos: unary(Math.cos),
  tan: unary(Math.tan),
  asin: unary(Math.asin),
  acos: unary(Math.acos),
  atan: unary(Math.atan),
  sinh: unary(Math.sinh),
  cosh: unary(Math.cosh),
  tanh: unary(Math.tanh),
  log: {
    arity: [1, 2],
    apply: (args) =>
      args.length === 2
        ? Math.log(args[0] as number) / Math.log(args[1] as number)
        : Math.log10(args[0] as number),
  },
  round: {
    arity: [1, 2],
    apply: (args) => {
      const digits = args[1] ?? 0;
      if (!Number.isInteger(digits) || digits < 0 || digits > 15) return NaN;
      const factor = 10 ** digits;
      return Math.round((args[0] as number) * factor) / factor;
    },
  },
  pow: { arity: [2, 2], apply: (args) => (args[0] as number) ** (args[1] as number) },
  atan2: { arity: [2, 2], apply: (args) => Math.atan2(args[0] as number, args[1] as number) },
  hypot: { arity: [1, 32], apply: (args) => Math.hypot(...args) },
  min: { arity: [1, 32], apply: (args) => Math.min(...args) },
  max: { arity: [1, 32], apply: (args) => Math.max(...args) },
  sum: { arity: [1, 32], apply: (args) => args.reduce((total, value) => total + value, 0) },
  avg: {
    arity: [1, 32],
    apply: (args) => args.reduce((total, value) => total + value, 0) / args.length,
  },
};

export const CALC_FUNCTION_NAMES = Object.keys(FUNCTIONS).sort();
export const CALC_CONSTANT_NAMES = Object.keys(CONSTANTS).sort();

type Token =
  | { kind: 'number'; value: number; position: number }
  | { kind: 'name'; value: string; position: number }
  | { kind: 'symbol'; value: string; position: number }
  | { kind: 'end'; position: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < source.length) {
    const char = source[index] as string;
    if (/\s/.test(char)) {
      index += 1;
      continue;
    }
    const numberMatch = /^(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(
      source.slice(index),
    );
    if (numberMatch) {
      const text = numberMatch[0];
      tokens.push({ kind: 'number', value: Number(text.replaceAll('_', '')), position: index });
      index += text.length;
      continue;
    }
    const nameMatch = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(index));
    if (nameMatch) {
      tokens.push({ kind: 'name', value: nameMatch[0].toLowerCase(), position: index });
      index += nameMatch[0].length;
      continue;
    }
    if ('+-*/%^(),!'.includes(char)) {
      // `**` is accepted as a spelling of `^`.
      if (char === '*' && source[index + 1] === '*') {
        tokens.push({ kind: 'symbol', value: '^', position: index });
        index += 2;
        continue;
      }
      tokens.push({ kind: 'symbol', value: char, position: index });
      index += 1;
      continue;
    }
    throw new CalcError(`unexpected character "${char}"`, index);
  }
  tokens.push({ kind: 'end', position: source.length });
  return tokens;
}

function factorial(value: number, position: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new CalcError('factorial needs a non-negative integer', position);
  }
  if (value > CALC_LIMITS.maxFactorial) throw new CalcError('factorial too large', position);
  let result = 1;
  for (let factor = 2; factor <= value; factor += 1) result *= factor;
  return result;
}

class Parser {
  private index = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private next(): Token {
    const token = this.peek();
    this.index += 1;
    return token;
  }

  private isSymbol(value: string): boolean {
    const token = this.peek();
    return token.kind === 'symbol' && token.value === value;
  }

  private expect(value: string): void {
    const token = this.next();
    if (token.kind !== 'symbol' || token.value !== value) {
      throw new CalcError(`expected "${value}"`, token.position);
    }
  }

  private nested<T>(position: number, parse: () => T): T {
    this.depth += 1;
    if (this.depth > CALC_LIMITS.maxDepth)
      throw new CalcError('expression nested too deeply', position);
    try {
      return parse();
    } finally {
      this.depth -= 1;
    }
  }

  parseAll(): number {
    const value = this.sum();
    const token = this.peek();
    if (token.kind !== 'end') throw new CalcError('unexpected input', token.position);
    return value;
  }

  private sum(): number {
    let value = this.product();
    while (this.isSymbol('+') || this.isSymbol('-')) {
      const operator = this.next() as { value: string };
      const right = this.product();
      value = operator.value === '+' ? value + right : value - right;
    }
    return value;
  }

  private product(): number {
    let value = this.unary();
    while (this.isSymbol('*') || this.isSymbol('/') || this.isSymbol('%')) {
      const operator = this.next() as { value: string; position: number };
      const right = this.unary();
      if ((operator.value === '/' || operator.value === '%') && right === 0) {
        throw new CalcError('division by zero', operator.position);
      }
      if (operator.value === '*') value *= right;
      else if (operator.value === '/') value /= right;
      else value %= right;
    }
    return value;
  }

  private unary(): number {
    const token = this.peek();
    if (this.isSymbol('-') || this.isSymbol('+')) {
      this.next();
      const operand = this.nested(token.position, () => this.unary());
      return token.kind === 'symbol' && token.value === '-' ? -operand : operand;
    }
    return this.power();
  }

  private power(): number {
    const base = this.postfix();
    if (this.isSymbol('^')) {
      const token = this.next();
      const exponent = this.nested(token.position, () => this.unary());
      return base ** exponent;
    }
    return base;
  }

  private postfix(): number {
    let value = this.primary();
    while (this.isSymbol('!')) {
      const token = this.next();
      value = factorial(value, token.position);
    }
    return value;
  }

  private primary(): number {
    const token = this.next();
    if (token.kind === 'number') return token.value;
    if (token.kind === 'symbol' && token.value === '(') {
      const value = this.nested(token.position, () => this.sum());
      this.expect(')');
      return value;
    }
    if (token.kind === 'name') {
      // Own properties only: a name like "constructor" must not reach Object.prototype.
      const fn = Object.hasOwn(FUNCTIONS, token.value) ? FUNCTIONS[token.value] : undefined;
      if (fn && this.isSymbol('(')) return this.call(token.value, fn, token.position);
      if (Object.hasOwn(CONSTANTS, token.value)) return CONSTANTS[token.value] as number;
      throw new CalcError(`unknown name "${token.value}"`, token.position);
    }
    if (token.kind === 'end') throw new CalcError('unexpected end of expression', token.position);
    throw new CalcError(`unexpected "${token.value}"`, token.position);
  }

  private call(name: string, fn: CalcFunction, position: number): number {
    this.expect('(');
    const args: number[] = [];
    if (!this.isSymbol(')')) {
      args.push(this.nested(position, () => this.sum()));
      while (this.isSymbol(',')) {
        this.next();
        args.push(this.nested(position, () => this.sum()));
      }
    }
    this.expect(')');
    const [least, most] = fn.arity;
    if (args.length < least || args.length > most) {
      const expected = least === most ? `${least}` : `${least}–${most}`;
      throw new CalcError(`${name}() takes ${expected} arguments, got ${args.length}`, position);
    }
    return fn.apply(args);
  }
}

/** Evaluates an arithmetic expression; throws CalcError with a position on bad input. */
export function evaluateExpression(source: string): number {
  if (source.length > CALC_LIMITS.maxLength) {
    throw new CalcError(`expression longer than ${CALC_LIMITS.maxLength} characters`, 0);
  }
  const value = new Parser(tokenize(source)).parseAll();
  if (!Number.isFinite(value)) {
    throw new CalcError(Number.isNaN(value) ? 'result is not a number' : 'result is infinite', 0);
  }
  return value;
}
