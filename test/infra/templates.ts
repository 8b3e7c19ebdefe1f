import { readFileSync } from 'node:fs';
import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { createGeoPlaneApp, type GeoPlaneAppOptions } from '#infra/stacks/geoplane-stack.ts';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../../console/build.ts';

type Json = Record<string, any>;

/** The stack and every stack nested under it, parent first. */
export function stacksOf(stack: Stack): Stack[] {
  return [stack, ...stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c))];
}

/** The template of the stack and of each stack nested under it (ADR 0077), parent first. */
export function templatesOf(stack: Stack): [Stack, Template][] {
  return stacksOf(stack).map((s) => [s, Template.fromStack(s)]);
}

/** Resources of a template, without CDK's version-reporting metadata (the CLI adds one per template). */
const resourcesOf = (template: Json): Record<string, Json> =>
  Object.fromEntries(
    Object.entries((template.Resources ?? {}) as Record<string, Json>).filter(
      ([, r]) => r.Type !== 'AWS::CDK::Metadata',
    ),
  );

/** `value` with every `{ Ref: <key of values> }` replaced by that value (deeply). */
function substitute(value: unknown, values: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => substitute(v, values));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Json);
  if (entries.length === 1 && entries[0]?.[0] === 'Ref' && typeof entries[0][1] === 'string') {
    const name = entries[0][1];
    if (Object.hasOwn(values, name)) return structuredClone(values[name]);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, substitute(v, values)]));
}

/**
 * The deployment as one template: the parent's resources and outputs and every nested stack's
 * resources, each nested parameter replaced by the value the parent passes it. A nested function's
 * `TABLE_NAME` then reads `{ Ref: <table> }` and a method's `AuthorizerId` `{ Ref: <authorizer> }`, as
 * they would in one stack, so assertions written for one template keep their meaning. Logical ids
 * are those of each resource's own template; two templates using the same one throw.
 */
export function deploymentTemplate(stack: Stack): Template {
  const resources: Record<string, Json> = {};
  /** The resolved resources of each stack, so deeper nested stacks read their parameters from it. */
  const resolved = new Map<Stack, Record<string, Json>>();
  for (const [s, template] of templatesOf(stack)) {
    const json = template.toJSON();
    let own = resourcesOf(json);
    const parent = s.nestedStackParent;
    if (parent) {
      const nested = s as NestedStack;
      const stackResource = resolved.get(parent)?.[parent.getLogicalId(nested.nestedStackResource as never)];
      if (!stackResource) throw new Error(`no stack resource for ${s.node.path} in ${parent.node.path}`);
      const parameters = (stackResource.Properties?.Parameters ?? {}) as Record<string, unknown>;
      for (const name of Object.keys(json.Parameters ?? {}))
        if (!Object.hasOwn(parameters, name)) throw new Error(`${s.node.path}: parameter ${name} not passed`);
      own = substitute(own, parameters) as Record<string, Json>;
    }
    resolved.set(s, own);
    for (const [id, resource] of Object.entries(own)) {
      if (Object.hasOwn(resources, id)) throw new Error(`logical id ${id} is used by two templates`);
      resources[id] = resource;
    }
  }
  const parentJson = Template.fromStack(stack).toJSON();
  return Template.fromJSON({ ...parentJson, Resources: resources });
}

/** Number of resources of a template, as CloudFormation counts them against its per-stack limit. */
export function resourceCount(template: Template): number {
  return Object.keys(template.toJSON().Resources ?? {}).length;
}

/**
 * The app as `cdk synth` makes it, console included (issue #14): builds console/dist first when its
 * sources changed, as infra/app.ts does, then synthesizes without bundling or CloudFormation
 * validation (speed). Stacks made without `consoleDist` have no console and need no build.
 */
export async function appWithConsole(options: Omit<GeoPlaneAppOptions, 'consoleDist'> = {}) {
  await ensureConsoleBuilt();
  return createGeoPlaneApp({
    bundling: false,
    builtinCloudFormationValidation: false,
    ...options,
    consoleDist: CONSOLE_DIST,
  });
}

/** The context of cdk.json, as `cdk synth` passes it. */
export const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

/**
 * The app as `cdk synth` makes it from cdk.json with `context` over it, minus bundling and
 * CloudFormation validation (speed); `template` is the deployment as one template (see
 * {@link deploymentTemplate}).
 */
export function synthesize(context: Record<string, unknown> = {}) {
  const { app, stack } = createGeoPlaneApp({
    context: { ...cdkContext, ...context },
    bundling: false,
    builtinCloudFormationValidation: false,
  });
  return { app, stack, template: deploymentTemplate(stack) };
}
