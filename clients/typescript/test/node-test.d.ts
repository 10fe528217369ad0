/*
 * node:test and node:assert/strict, declared by hand (Debian ships no @types/node), narrowed to what the tests call.
 * Its own file, without Node's globals, so the pages' tests (which have the DOM's) can use it too.
 */

declare module "node:test" {
  interface TestContext {
    after(fn: () => any): void;
  }
  type TestFn = (t: TestContext) => any;
  interface TestOptions {
    timeout?: number;
    skip?: boolean | string;
    concurrency?: number | boolean;
  }
  function test(name: string, fn: TestFn): Promise<void>;
  function test(name: string, options: TestOptions, fn: TestFn): Promise<void>;
  function describe(name: string, fn: () => any): Promise<void>;
  function describe(name: string, options: TestOptions, fn: () => any): Promise<void>;
  function before(fn: () => any): void;
  function after(fn: () => any): void;
  function afterEach(fn: () => any): void;
  export { test, describe, before, after, afterEach, TestContext };
  export default test;
}

declare module "node:assert/strict" {
  interface Assert {
    (value: unknown, message?: string): asserts value;
    ok(value: unknown, message?: string): asserts value;
    equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    notEqual(actual: unknown, expected: unknown, message?: string): void;
    deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    notDeepEqual(actual: unknown, expected: unknown, message?: string): void;
    match(value: string, pattern: RegExp, message?: string): void;
    fail(message?: string): never;
    throws(fn: () => unknown, expected?: RegExp | object, message?: string): void;
    rejects(fn: Promise<unknown> | (() => Promise<unknown>), message?: string | RegExp | object): Promise<void>;
  }
  const assert: Assert;
  export default assert;
}
