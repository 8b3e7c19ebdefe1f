/**
 * A module-level schema or operation of the API layer, built where it is declared, and dropped by
 * the bundler from every Lambda bundle that never reads it (ADR 0149). Declare it as
 *
 *   export const Workspace = /* @__PURE__ *\/ shakable(() => z.strictObject({ … }));
 *
 * The annotation tells esbuild that the call has no side effects, so an unused declaration goes
 * with everything only it used; the function wrapped around the value is what lets it: zod's
 * builder calls are side effects to esbuild at a call site that carries no annotation of its own.
 * (esbuild reads the annotation at the call only, not on the declaration of an imported function:
 * evanw/esbuild#4369.) A route's bundle builds only its own operation's schemas at a cold start,
 * not the whole API's: ~400 fewer zod schemas, 4–10 ms less import.
 *
 * From source (tests, the local host, the OpenAPI writer) every declaration is built as before:
 * the call runs `build` once, at once, in declaration order.
 */
export function shakable<T>(build: () => T): T {
  return build();
}
