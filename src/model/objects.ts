/**
 * `{ ...base, ...fields }` for objects made by the thousand: the same keys, in the same order.
 *
 * Node 20's V8 gives every object from a literal that starts with a spread and goes on (`{ ...a, b }`)
 * a hidden class of its own. At 10,000 Ingresses that was 57,000 hidden classes (22 MB), and every
 * property read on such objects is megamorphic: making 40,000 of them took 3× as long, reading them
 * back 19× (measured with a one-off script). `Object.assign` onto a fresh literal shares them.
 * Only for objects this program made: `Object.assign` runs the `__proto__` setter for such a key,
 * which an object parsed from input may have.
 *
 * `fields` are fields of `base`'s own type, so a misspelt one is a type error, as in the literal.
 */
export function withFields<T extends object>(base: T, fields: Partial<T>): T {
  return Object.assign({}, base, fields);
}

/** `withFields` for fields that `base`'s type does not have: the result has both. */
export function withAddedFields<T extends object, U extends object>(base: T, fields: U): Omit<T, keyof U> & U {
  return Object.assign({}, base, fields);
}

/**
 * Deep equality of plain data (what the model is made of), quick where the two share parts: a part that
 * is the same object is not looked into. An absent key and one set to `undefined` count as different.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * Whether `JSON.stringify` writes the same text for `a` and `b`, without writing it: keys in their order,
 * keys set to `undefined` left out, and the keys in `skip` left out of `a` and `b` themselves. A part both
 * share is not looked into, and compared model objects share most of theirs. For plain data, what the
 * model is made of (no `undefined` in arrays, no numbers JSON cannot write).
 */
export function sameJsonText(a: unknown, b: unknown, skip?: ReadonlySet<string>): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJsonText(item, b[i]));
  }
  const aKeys = writtenKeys(a, skip);
  const bKeys = writtenKeys(b, skip);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key, i) => key === bKeys[i] && sameJsonText((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function writtenKeys(object: object, skip: ReadonlySet<string> | undefined): string[] {
  return Object.keys(object).filter((key) => (object as Record<string, unknown>)[key] !== undefined && !skip?.has(key));
}
