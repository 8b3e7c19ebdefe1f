import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseSync, types as t } from '@babel/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '#api/openapi.ts';
import { routes } from '#api/routes.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { type BuiltBundles, buildBundles } from '../support/bundles.ts';

/**
 * ADR 0149: the API layer's module-level schemas and operations are declared shakable, so a
 * route's Lambda bundle builds its own operation's schemas at a cold start and not the whole API's.
 */
type Json = Record<string, unknown>;

/** The API layer's modules that build zod schemas. */
function schemaModules(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts') && readFileSync(path, 'utf8').includes("from 'zod/mini'")) out.push(path);
    }
  };
  walk(join(repositoryRoot, 'shared/api'));
  return out;
}

/** Whether `node` calls anything outside a function body (a call esbuild must keep). */
function calls(node: t.Node): boolean {
  let found = false;
  t.traverseFast(node, (n) => {
    if (t.isCallExpression(n) || t.isNewExpression(n) || t.isTaggedTemplateExpression(n)) found = true;
  });
  // A function's body runs when called: a declaration of a function calls nothing.
  return found && !t.isArrowFunctionExpression(node) && !t.isFunctionExpression(node);
}

/** `/* @__PURE__ *\/ shakable(() => …)`. */
const isShakable = (node: t.Node): boolean =>
  t.isCallExpression(node) &&
  t.isIdentifier(node.callee, { name: 'shakable' }) &&
  node.arguments.length === 1 &&
  t.isArrowFunctionExpression(node.arguments[0]) &&
  (node.leadingComments ?? []).some((c) => c.value.trim() === '@__PURE__');

/** The named schemas (components) an operation's path item reaches, through every `$ref`. */
function reachableSchemas(document: Json, operationId: string): Set<string> {
  const components = (document.components as { schemas: Record<string, Json> }).schemas;
  const paths = document.paths as Record<string, Record<string, Json>>;
  const operation = Object.values(paths)
    .flatMap((item) => Object.values(item))
    .find((op) => op.operationId === operationId);
  if (!operation) throw new Error(`no operation ${operationId} in the OpenAPI document`);
  const seen = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
          const name = value.slice('#/components/schemas/'.length);
          if (!seen.has(name)) {
            seen.add(name);
            visit(components[name]);
          }
        } else visit(value);
      }
    }
  };
  visit(operation);
  return seen;
}

describe('shakable schemas (ADR 0149)', () => {
  it('declares every module-level value of a schema module that calls anything as /* @__PURE__ */ shakable(() => …)', () => {
    const offenders: string[] = [];
    const modules = schemaModules();
    expect(modules.length).toBeGreaterThan(20);
    for (const file of modules) {
      const ast = parseSync(readFileSync(file, 'utf8'), {
        filename: file,
        configFile: false,
        babelrc: false,
        presets: ['@babel/preset-typescript'],
      });
      if (!ast) throw new Error(`${file} did not parse`);
      for (const statement of ast.program.body) {
        const declaration = t.isExportNamedDeclaration(statement) ? statement.declaration : statement;
        if (!t.isVariableDeclaration(declaration)) continue;
        for (const d of declaration.declarations) {
          const where = `${relative(repositoryRoot, file)}:${d.loc?.start.line}`;
          if (!d.init || !calls(d.init)) continue;
          // A destructuring declaration is kept whole, used or not (the iterator may do anything).
          if (!t.isIdentifier(d.id)) offenders.push(`${where} destructures`);
          else if (!isShakable(d.init)) offenders.push(`${where} ${d.id.name}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  describe('a route bundle holds only the named schemas its operation reaches', () => {
    const checked = ['getStyle', 'getWorkspace', 'listLayers', 'createImport', 'updateWMSSettings'];
    const handlers = new Map(routes.map((op) => [op.operationId, op.handler]));
    let built: BuiltBundles;
    let document: Json;
    let all: string[];

    beforeAll(() => {
      built = buildBundles(checked.map((id) => handlers.get(id) as string));
      document = openApiDocument();
      all = Object.keys((document.components as { schemas: Json }).schemas);
    }, 120_000);
    afterAll(() => built?.remove());

    it.each(checked)('%s', (operationId) => {
      const text = readFileSync(built.bundle(handlers.get(operationId) as string), 'utf8');
      // zod's meta({ id }) survives minifying as the property `id:"Name"`.
      const inBundle = all.filter((name) => text.includes(`id:${JSON.stringify(name)}`));
      const reachable = reachableSchemas(document, operationId);
      expect(inBundle.filter((name) => !reachable.has(name))).toEqual([]);
      // Not vacuous: the API has many more, and the operation's own are there.
      expect(all.length - reachable.size).toBeGreaterThan(50);
      expect(inBundle.length).toBeGreaterThan(0);
    });
  });
});
