import fc from 'fast-check';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { unless } from './helpers.js';

const source = '{{#unless value}}empty {{name}}{{else}}set {{name}}{{/unless}}';
const compileOptions = { noEscape: true, strict: true } as const;

const builtIn = Handlebars.create().compile(source, compileOptions);
const ours = (() => {
  const handlebars = Handlebars.create();
  handlebars.registerHelper('unless', unless);
  return handlebars.compile(source, compileOptions);
})();

describe('unless', () => {
  it('renders what the built-in renders, for any value the model can hold', () => {
    const value = fc.oneof(fc.jsonValue(), fc.constantFrom(undefined, 0, -0, '', [], {}, [0], [[]], false, true));
    fc.assert(
      fc.property(value, (v) => {
        const context = { value: v, name: 'host' };
        expect(ours(context)).toBe(builtIn(context));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the context of the block', () => {
    expect(ours({ value: [], name: 'a' })).toBe('empty a');
    expect(ours({ value: ['x'], name: 'b' })).toBe('set b');
  });

  it('refuses a block with more than one argument, as the built-in does', () => {
    const handlebars = Handlebars.create();
    handlebars.registerHelper('unless', unless);
    const twoArguments = handlebars.compile('{{#unless a b}}x{{/unless}}', compileOptions);
    expect(() => twoArguments({ a: 1, b: 2 })).toThrow(/exactly one argument/);
  });
});
