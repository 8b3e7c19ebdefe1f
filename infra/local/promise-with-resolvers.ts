/**
 * aws-local-stepfunctions 3 uses `Promise.withResolvers` (Node 22); on Node 20 it is supplied
 * here. Imported for its effect by the local workflow runner and its tests.
 */
const promiseStatics = Promise as unknown as { withResolvers?: () => unknown };
promiseStatics.withResolvers ??= () => {
  let resolve!: (value: unknown) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
};
