/**
 * TypeScript's `satisfies` for the project's compiler (Debian 12's tsc 4.8 predates the operator):
 * `satisfies<T>()(value)` fails to compile unless `value` is assignable to `T`, and keeps `value`'s own type — a
 * check, never a cast.
 */
export const satisfies = <T>() => <U extends T>(value: U): U => value;
