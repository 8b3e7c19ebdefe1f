import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataRoutes } from '#api/data-routes.ts';
import { openApiDocument } from '#api/openapi.ts';
import { routes } from '#api/routes.ts';
import { deletionTaskDescription, deletionTasks } from '#infra/constructs/deletion-workflow.ts';
import { importTaskDescription, importTasks } from '#infra/constructs/import-workflow.ts';
import { jobLoopTaskDescription, jobLoopTasks } from '#infra/constructs/job-loop-workflow.ts';
import { createGeoPlaneApp } from '#infra/stacks/geoplane-stack.ts';
import { harvestWorkflow } from '#infra/workflows/harvest-workflow.ts';
import { tileCacheWorkflow } from '#infra/workflows/tile-cache-workflow.ts';
import { deploymentTemplate } from '../infra/templates.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Entry points under functions/ that serve no route. */
const nonRouteFolders = [
  'functions/authorizer/',
  'functions/workflow-tasks/',
  'functions/bootstrap/',
  // The scheduled sweep (ADR 0093): invoked by an EventBridge rule, not a route.
  'functions/sweeps/',
  // The catalog events' stream reader (ADR 0094): invoked by the table's stream, not a route.
  'functions/events/',
];

const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** `createAPIKey` → `create-api-key`, `getOpenAPI` → `get-open-api`. */
function kebab(operationId: string): string {
  return operationId
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

function tsFilesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

describe('route table', () => {
  it('has unique operationIds', () => {
    const ids = routes.map((op) => op.operationId);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has one entry per method and path', () => {
    const keys = routes.map((op) => routeKey(op.method, op.path));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(routes.map((op) => [op.operationId, op] as const))(
    '%s lives under /api/v1 with its handler at functions/<area>/<operation-id-in-kebab-case>.ts',
    (id, op) => {
      expect(op.path).toMatch(/^\/api\/v1\//);
      expect(op.handler).toMatch(new RegExp(`^functions/[a-z0-9-]+/${kebab(id)}\\.ts$`));
    },
  );
});

describe('route table ↔ functions/', () => {
  it.each(routes.map((op) => [op.operationId, op.handler] as const))(
    "%s's handler %s exists and exports a handler function",
    async (_id, handler) => {
      const file = join(root, handler);
      expect(existsSync(file)).toBe(true);
      const module = (await import(pathToFileURL(file).href)) as { handler?: unknown };
      expect(typeof module.handler).toBe('function');
    },
  );

  it('has a route for every entry point under functions/ (except the authorizer, workflow tasks, the bootstrap custom resource, the sweep and the events reader)', () => {
    const handlers = new Set([...routes, ...dataRoutes].map((op) => op.handler));
    const orphans = tsFilesUnder('functions').filter(
      (file) => !nonRouteFolders.some((folder) => file.startsWith(folder)) && !handlers.has(file),
    );
    expect(orphans).toEqual([]);
  });

  it('has the authorizer entry point the stack deploys', () => {
    expect(existsSync(join(root, 'functions/authorizer/index.ts'))).toBe(true);
  });
});

type Resource = { Type: string; Properties: Record<string, any> };

/** Method+path of every API Gateway method of the template, rebuilt from the resource tree. */
function templateMethods(template: Template): { key: string; method: Resource }[] {
  const resources = template.toJSON().Resources as Record<string, Resource>;
  const pathOf = (parent: any): string => {
    if (parent?.['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const resource = resources[parent?.Ref];
    if (resource?.Type !== 'AWS::ApiGateway::Resource')
      throw new Error(`unknown parent ${JSON.stringify(parent)}`);
    return `${pathOf(resource.Properties.ParentId)}/${resource.Properties.PathPart}`;
  };
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGateway::Method')
    .map((method) => ({
      key: routeKey(method.Properties.HttpMethod, pathOf(method.Properties.ResourceId) || '/'),
      method,
    }));
}

describe('route table ↔ synthesized template', () => {
  let template: Template;
  /** [operationId, logical id] of every function, read from the description it carries. */
  let functions: [string, string][];
  let functionIdByOperation: Map<string, string>;

  beforeAll(() => {
    const context = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')).context;
    const { stack } = createGeoPlaneApp({ context, bundling: false, builtinCloudFormationValidation: false });
    // The parent and its nested stacks as one template, nested parameters resolved (ADR 0077).
    template = deploymentTemplate(stack);
    functions = Object.entries(template.findResources('AWS::Lambda::Function')).map(([id, fn]) => [
      String(fn.Properties.Description).split(':')[0] as string,
      id,
    ]);
    functionIdByOperation = new Map(functions);
  });

  it('has exactly one API method per route method and path', () => {
    const inTemplate = templateMethods(template)
      .map((m) => m.key)
      .sort();
    expect(inTemplate).toEqual([...routes, ...dataRoutes].map((op) => routeKey(op.method, op.path)).sort());
  });

  it('names path variables consistently (API Gateway refuses two variables under one parent)', () => {
    const resources = template.findResources('AWS::ApiGateway::Resource');
    const variablesByParent = new Map<string, string[]>();
    for (const r of Object.values(resources)) {
      const part = String(r.Properties.PathPart);
      if (!part.startsWith('{')) continue;
      const parent = JSON.stringify(r.Properties.ParentId);
      variablesByParent.set(parent, [...(variablesByParent.get(parent) ?? []), part]);
    }
    for (const parts of variablesByParent.values()) expect(parts).toHaveLength(1);
  });

  it('has a function per route, plus the authorizer, the deletion, import, harvest and tile cache workflow tasks, bootstrapAdmins, the sweep and the events publisher', () => {
    const tasks = [
      ...deletionTasks.map((task) => deletionTaskDescription(task).split(':')[0]),
      ...importTasks.map((task) => importTaskDescription(task).split(':')[0]),
      ...jobLoopTasks(harvestWorkflow).map(
        (task) => jobLoopTaskDescription(harvestWorkflow, task).split(':')[0],
      ),
      ...jobLoopTasks(tileCacheWorkflow).map(
        (task) => jobLoopTaskDescription(tileCacheWorkflow, task).split(':')[0],
      ),
    ];
    expect(functions.map(([operationId]) => operationId).sort()).toEqual(
      [
        ...routes.map((op) => op.operationId),
        // One function serves the whole data route table (ADR 0122, 0123).
        'dataPlane',
        'authorizer',
        ...tasks,
        'bootstrapAdmins',
        'sweep',
        'catalog events',
      ].sort(),
    );
  });

  it.each(routes.map((op) => [op.operationId, op] as const))('routes %s to its own function', (id, op) => {
    const found = templateMethods(template).filter((m) => m.key === routeKey(op.method, op.path));
    expect(found).toHaveLength(1);
    const uri = JSON.stringify(found[0]?.method.Properties.Integration.Uri);
    expect(uri).toContain(`"${functionIdByOperation.get(id)}","Arn"`);
  });
});

describe('route table ↔ docs/openapi.json', () => {
  const committed = JSON.parse(readFileSync(join(root, 'docs/openapi.json'), 'utf8'));

  it('is what `npm run openapi` generates now (no drift)', () => {
    expect(committed).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it('has exactly one operation per route, with its operationId', () => {
    const methods = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);
    const operations: string[] = [];
    for (const [path, item] of Object.entries(committed.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (methods.has(method)) operations.push(`${routeKey(method, path)} ${op.operationId}`);
      }
    }
    expect(operations.sort()).toEqual(
      routes.map((op) => `${routeKey(op.method, op.path)} ${op.operationId}`).sort(),
    );
  });
});
