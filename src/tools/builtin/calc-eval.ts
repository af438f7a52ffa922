import { z } from 'zod';
import { defineTool, ToolError } from '../tool.ts';
import {
  CALC_CONSTANT_NAMES,
  CALC_FUNCTION_NAMES,
  CalcError,
  evaluateExpression,
} from './calc-expression.ts';

export const calcEvalTool = defineTool({
  name: 'calc_eval',
  family: 'calc',
  effect: 'read_only',
  description:
    'Evaluate an arithmetic expression exactly as written: + - * / % ^ (power), ! (factorial), ' +
    `parentheses, constants ${CALC_CONSTANT_NAMES.join(', ')}, functions ${CALC_FUNCTION_NAMES.join(', ')}.`,
  input: z.strictObject({
    expression: z.string().min(1).max(1000).describe('for example "(3 + 4) * 2 ^ 3" or "sqrt(2)"'),
  }),
  run: async ({ expression }) => {
    try {
      return { expression, value: evaluateExpression(expression) };
    } catch (error) {
      if (error instanceof CalcError) throw new ToolError('CALC_INVALID', error.message);
      throw error;
    }
  },
});
