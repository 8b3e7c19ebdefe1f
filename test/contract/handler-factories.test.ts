import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';

const root = join(import.meta.dirname, '../..');

describe('handler factories (ADR 0094; issue #15 and #27 bundle sizes)', () => {
  it.each(routes.map((op) => [op.operationId, op] as const))(
    '%s is made by the factory of its kind: makeHandler for a read, makeIdempotentHandler for a POST, makeChangeHandler for another change',
    (_id, op) => {
      const text = readFileSync(join(root, op.handler), 'utf8');
      const made = {
        read: /\bmakeHandler\(/.test(text),
        post: /\bmakeIdempotentHandler\(/.test(text),
        change: /\bmakeChangeHandler\(/.test(text),
      };
      const kind = op.method === 'GET' ? 'read' : op.method === 'POST' ? 'post' : 'change';
      expect(made).toEqual({ read: kind === 'read', post: kind === 'post', change: kind === 'change' });
    },
  );
});

/**
 * Every handler makes one call (issue #28; ADR 0145): the use case, given its ports and the
 * request's command; around it only the answer's shaping (present, status, Location, cookies).
 * What the request names — `{workspace}`, `{service}` — the middleware stack resolved already. So
 * its body awaits at most once, and reads no repository itself besides the one call.
 */
describe('handlers make one call (issue #28)', () => {
  it.each(routes.map((op) => [op.operationId, op] as const))('%s awaits at most once', (_id, op) => {
    const text = readFileSync(join(root, op.handler), 'utf8');
    const body = text.slice(text.indexOf('export const handler'));
    expect(body.length, 'a handler made by its factory').toBeLessThan(text.length);
    expect(body.match(/\bawait\b/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});

/** The text between the bracket at `open` and the one that closes it, strings skipped. */
function bracketed(text: string, open: number): string {
  const closing: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
    } else if (closing[c]) stack.push(closing[c]);
    else if (c === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return text.slice(open + 1, i);
    }
  }
  throw new Error(`unbalanced brackets from ${open}`);
}

/** The top-level arguments of an argument list's text. */
function splitArguments(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i] as string;
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < list.length && list[i] !== c; i++) if (list[i] === '\\') i++;
    } else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      out.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(list.slice(start).trim());
  return out.filter((a) => a !== '');
}

/**
 * The arguments of the call a handler body awaits (`await useCase(deps, command)`), or undefined
 * when it awaits no call. A callee chain (`repo().list(…)`) is followed to its last call.
 */
function awaitedArguments(body: string): string[] | undefined {
  const at = body.search(/\bawait\b/);
  if (at < 0) return undefined;
  let i = at + 'await'.length;
  for (;;) {
    const name = /^\s*[\w$.]+/.exec(body.slice(i));
    if (!name) return undefined;
    i += name[0].length;
    if (body[i] !== '(') return undefined;
    const list = bracketed(body, i);
    i += list.length + 2;
    if (body[i] !== '.') return splitArguments(list);
  }
}

/**
 * Handlers whose one call does not take the use-case shape yet, each with what it waits on. The
 * list only shrinks: a handler that takes the shape must leave it (the test below says so). It is
 * empty since 2026-11-29; it stays so that a handler which can't take the shape says why here.
 */
const notYetShaped: Record<string, string> = {};

/**
 * A handler's one call passes the use case its ports and the request's command, nothing else
 * (issue #28; ADR 0145): at most two arguments. A call of one (a wiring helper's, `readiness(deps)`)
 * passes too.
 */
describe('handlers call the use case as verb(deps, command) (issue #28)', () => {
  const shaped = (text: string) => {
    const args = awaitedArguments(text.slice(text.indexOf('export const handler')));
    return args === undefined || args.length <= 2;
  };

  it.each(routes.map((op) => [op.operationId, op] as const))('%s passes (deps, command)', (id, op) => {
    const text = readFileSync(join(root, op.handler), 'utf8');
    expect(shaped(text), notYetShaped[id] ?? 'a call of more than (deps, command)').toBe(
      id in notYetShaped === false,
    );
  });

  it('names only operations that exist', () => {
    const ids = new Set(routes.map((op) => op.operationId));
    expect(Object.keys(notYetShaped).filter((id) => !ids.has(id))).toEqual([]);
  });
});
