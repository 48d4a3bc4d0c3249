import { describe, expect, it } from 'vitest';
import { snippetProblem } from './snippet-text.js';

describe('snippetProblem', () => {
  it.each([
    'add_header X-A b;',
    'location = /x { return 200 "}"; }',
    "set $a '{';\nset $b \"${a}x\";",
    '# a comment with } and {\nadd_header X-A b;',
    'if ($http_x) { return 403; }\n',
    'set $a x\\;;',
    '',
  ])('accepts %j', (text) => {
    expect(snippetProblem(text)).toBeUndefined();
  });

  it.each([
    ['} server { listen 1; }', /closes a block/],
    // `#` inside a word is no comment to nginx: the `}` after it closes the location.
    ['set $a x#;} server { location / {', /closes a block|leaves a block open/],
    ['set $a x#;}', /closes a block/],
    ['location / {', /leaves a block open/],
    ['return 200 "open;', /quoted string open/],
    ['add_header X-A b', /complete directive/],
    ['add_header X-A b;\nproxy_pass', /complete directive/],
    ['a\0b;', /NUL/],
    ['x'.repeat(70_000) + ';', /longer than/],
  ])('refuses %j', (text, problem) => {
    expect(snippetProblem(text)).toMatch(problem);
  });
});
