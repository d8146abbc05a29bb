import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { validatorCompiler } from '../../src/http/validation.js';

const Schema = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    ratio: Type.Optional(Type.Number()),
    flag: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

type Outcome = { value?: unknown; error?: unknown[] };
const run = (httpPart: string, input: unknown) => (validatorCompiler({ schema: Schema, httpPart, method: 'GET', url: '/' }) as (v: unknown) => Outcome)(input);

describe('validatorCompiler', () => {
  it.each<[unknown, unknown, string]>([
    [{ page: '2' }, { page: 2 }, 'decimal integer'],
    [{}, { page: 1 }, 'default applied'],
    [{ ratio: '0.5' }, { page: 1, ratio: 0.5 }, 'decimal number'],
    [{ flag: 'true' }, { page: 1, flag: true }, 'boolean spelled true'],
    [{ flag: 'false' }, { page: 1, flag: false }, 'boolean spelled false'],
    [{ name: '42' }, { page: 1, name: '42' }, 'a string property stays a string'],
  ])('query %j → %j (%s)', (input, expected, _reason) => {
    expect(run('querystring', input)).toEqual({ value: expected });
  });

  it.each<[unknown, string]>([
    [{ page: '1.5' }, 'a fraction is not an integer'],
    [{ page: '1e3' }, 'exponent notation'],
    [{ page: ' 2' }, 'leading space'],
    [{ page: '0x10' }, 'hexadecimal'],
    [{ page: '' }, 'empty'],
    [{ page: ['1', '2'] }, 'repeated parameter'],
    [{ page: '0' }, 'below the minimum'],
    [{ flag: 'yes' }, 'boolean must be spelled true or false'],
    [{ other: '1' }, 'unknown parameter'],
  ])('query %j is refused (%s)', (input, _reason) => {
    expect(run('querystring', input).error?.length).toBeGreaterThan(0);
  });

  it('checks a body exactly as sent: no coercion, no defaults, nothing stripped', () => {
    expect(run('body', { page: '2' }).error?.length).toBeGreaterThan(0);
    expect(run('body', { flag: 'true' }).error?.length).toBeGreaterThan(0);
    expect(run('body', { page: 2, extra: 1 }).error?.length).toBeGreaterThan(0);
    expect(run('body', {})).toEqual({ value: {} });
  });
});
