// Small checkers that validate a value from outside (JSON.parse, a webview message) and return a
// fresh copy holding only the fields the shape names: a field the shape does not know is dropped,
// so nothing unchecked reaches the code that reads the copy. The first problem throws
// SchemaError naming the field path (`variants[3].medianMs`) and the value.
import { NumberRange, RANGES, rangeProblem, shownValue, unrollFactorProblem, UnrollFactorValue } from './ranges';

export class SchemaError extends Error {
  constructor(
    /** Where in the value: `variants[3].medianMs`, `loops[0].line`. */
    readonly field: string,
    problem: string,
  ) {
    super(`${field || 'the value'}: ${problem}`);
  }
}

/** Checks `value` at `path`; returns the checked copy. */
export type Check<T> = (value: unknown, path: string) => T;

/** A checker per field of T, none missing: a field added to the protocol without a range fails to compile. */
export type Shape<T> = { [K in keyof T]-?: Check<T[K]> };

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export const num =
  (r: NumberRange): Check<number> =>
  (v, path) => {
    const problem = rangeProblem(r, v);
    if (problem) throw new SchemaError(path, problem);
    return v === 0 ? 0 : (v as number); // -0 reads as 0
  };

export const str: Check<string> = (v, path) => {
  if (typeof v !== 'string') throw new SchemaError(path, `expected a string, got ${shownValue(v)}`);
  return v;
};

export const bool: Check<boolean> = (v, path) => {
  if (typeof v !== 'boolean') throw new SchemaError(path, `expected true or false, got ${shownValue(v)}`);
  return v;
};

export const oneOf =
  <const E extends string | number>(values: readonly E[]): Check<E> =>
  (v, path) => {
    if (!(values as readonly unknown[]).includes(v)) throw new SchemaError(path, `expected ${values.join(' or ')}, got ${shownValue(v)}`);
    return v as E;
  };

/** An unroll factor: default, full or an integer in `range` (default: the factors we build). */
export const factorIn =
  (range: NumberRange): Check<UnrollFactorValue> =>
  (v, path) => {
    const problem = unrollFactorProblem(v, range);
    if (problem) throw new SchemaError(path, problem);
    return v as UnrollFactorValue;
  };

export const factor: Check<UnrollFactorValue> = factorIn(RANGES.unrollFactor);

export const nullable =
  <T>(c: Check<T>): Check<T | null> =>
  (v, path) =>
    v === null ? null : c(v, path);

/** An optional field: absent stays absent (undefined), present is checked. */
export const optional =
  <T>(c: Check<T>): Check<T | undefined> =>
  (v, path) =>
    v === undefined ? undefined : c(v, path);

/** A field older files lack: absent reads as `fallback`. */
export const withDefault =
  <T>(c: Check<T>, fallback: T): Check<T> =>
  (v, path) =>
    v === undefined ? fallback : c(v, path);

export const either =
  <A, B>(a: Check<A>, b: Check<B>, expected: string): Check<A | B> =>
  (v, path) => {
    try {
      return a(v, path);
    } catch {
      try {
        return b(v, path);
      } catch {
        throw new SchemaError(path, `expected ${expected}, got ${shownValue(v)}`);
      }
    }
  };

export const array =
  <T>(c: Check<T>): Check<T[]> =>
  (v, path) => {
    if (!Array.isArray(v)) throw new SchemaError(path, `expected an array, got ${shownValue(v)}`);
    return v.map((x, i) => c(x, `${path}[${i}]`));
  };

/** An object used as a map: every key passes `key` (a problem in words, or null), every value `c`. */
export const record =
  <T>(c: Check<T>, key: (k: string) => string | null = () => null): Check<Record<string, T>> =>
  (v, path) => {
    if (!isPlainObject(v)) throw new SchemaError(path, `expected an object, got ${shownValue(v)}`);
    // A null prototype: a key such as "__proto__" is an ordinary key, not the object's prototype.
    const out: Record<string, T> = Object.create(null);
    for (const [k, x] of Object.entries(v)) {
      const problem = key(k);
      if (problem) throw new SchemaError(join(path, k), problem);
      out[k] = c(x, join(path, k));
    }
    return { ...out };
  };

/** An object of a known shape: every field of `shape` checked, other fields dropped. */
export const object =
  <T>(shape: Shape<T>): Check<T> =>
  (v, path) => {
    if (!isPlainObject(v)) throw new SchemaError(path, `expected an object, got ${shownValue(v)}`);
    const checkedFields: Record<string, unknown> = {};
    for (const k of Object.keys(shape) as (keyof T & string)[]) {
      const own = Object.prototype.hasOwnProperty.call(v, k) ? v[k] : undefined;
      const checked = (shape[k] as Check<unknown>)(own, join(path, k));
      if (checked !== undefined) checkedFields[k] = checked;
    }
    // In the input's key order (then fields it lacked that got a default): a result read back
    // serialises as it was written, whatever order the shape lists its fields in.
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) if (Object.prototype.hasOwnProperty.call(checkedFields, k)) out[k] = checkedFields[k];
    for (const k of Object.keys(checkedFields)) if (!(k in out)) out[k] = checkedFields[k];
    return out as T;
  };
