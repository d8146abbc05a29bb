import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { describeSchemaErrors, MAX_DESCRIBED_PROBLEMS, summarizeSchemaErrors } from '../../src/store/schema-errors.js';

const Schema = Type.Object(
  {
    name: Type.String({ minLength: 2, maxLength: 4 }),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    mode: Type.Optional(Type.Enum(['a', 'b'])),
    choice: Type.Optional(Type.Union([Type.Literal('x'), Type.Literal('y')])),
    maybe: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    list: Type.Optional(Type.Array(Type.Object({ id: Type.String() }, { additionalProperties: false }), { maxItems: 2 })),
    code: Type.Optional(Type.String({ pattern: '^[A-Z]+$' })),
    'odd key': Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const validator = Compile(Schema);
const describeValue = (value: unknown) => describeSchemaErrors([...validator.Errors(value)], value, 'body');

describe('describeSchemaErrors', () => {
  it.each<[unknown, string[], string]>([
    [{}, ['body.name is required'], 'missing required field'],
    [{ name: 'a' }, ['body.name must be at least 2 character(s) long (it has 1)'], 'minLength with the actual length'],
    [{ name: 'abcde' }, ['body.name must be at most 4 characters long (it has 5)'], 'maxLength with the actual length'],
    [{ name: '😀😀😀😀' }, [], 'lengths count code points: four emoji are four characters'],
    [{ name: 'ab', count: 0 }, ['body.count must be at least 1 (got 0)'], 'minimum'],
    [{ name: 'ab', count: 11 }, ['body.count must be at most 10 (got 11)'], 'maximum'],
    [{ name: 'ab', count: 1.5 }, ['body.count must be a whole number (got 1.5)'], 'integer type'],
    [{ name: 'ab', mode: 'c' }, ["body.mode must be one of 'a', 'b' (got \"c\")"], 'enum'],
    [{ name: 'ab', choice: 'z' }, ["body.choice must be one of 'x', 'y' (got \"z\")"], 'union of literals'],
    [{ name: 'ab', maybe: 3 }, ['body.maybe must be a string or null (got 3)'], 'nullable string'],
    [{ name: 'ab', extra: 1, more: 2 }, ['body.extra is not an allowed field', 'body.more is not an allowed field'], 'unknown fields'],
    [{ name: 'ab', list: [{ id: 'a' }, { id: 1 }] }, ['body.list[1].id must be a string (got 1)'], 'nested path with an index'],
    [{ name: 'ab', list: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }, ['body.list must have at most 2 items'], 'maxItems'],
    [{ name: 'ab', code: 'abc' }, ['body.code is not in the expected format (got "abc")'], 'pattern'],
    [{ name: 'ab', 'odd key': 'yes' }, ['body["odd key"] must be true or false (got "yes")'], 'a key that is not an identifier'],
    [{ name: 'x'.repeat(60) }, ['body.name must be at most 4 characters long (it has 60)'], 'long values are not quoted in full'],
    ['text', ['body must be an object (got "text")'], 'wrong root type'],
    [null, ['body must be an object (got null)'], 'null root'],
  ])('%j → %j (%s)', (value, expected, _reason) => {
    expect(describeValue(value)).toEqual(expected);
  });

  it('with an empty label, names fields by JSON Pointer', () => {
    expect(describeSchemaErrors([...validator.Errors({ name: 1 })], { name: 1 }, '')).toEqual(['/name must be a string (got 1)']);
    expect(describeSchemaErrors([...validator.Errors(7)], 7, '')).toEqual(['the document must be an object (got 7)']);
  });

  it(`summarizes at most ${MAX_DESCRIBED_PROBLEMS} problems and counts the rest`, () => {
    const value = { name: 'a', a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 };
    const summary = summarizeSchemaErrors([...validator.Errors(value)], value, 'body');
    expect(summary.split('; ')).toHaveLength(MAX_DESCRIBED_PROBLEMS + 1);
    expect(summary).toMatch(/; and 2 more problem\(s\)\.$/);
  });
});
