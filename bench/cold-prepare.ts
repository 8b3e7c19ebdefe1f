/**
 * What section 2's cold requests need, made through the local host's API before the first run:
 * the items every run reads (Fixed) and each run's throwaway items (PerRun), which its requests
 * delete, revoke, end or move on.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { routes } from '#api/routes.ts';
import { localIssuer } from '#infra/local/files.ts';
import {
  type Fixed,
  type PerRun,
  PNG,
  sessionHeaders,
  short,
  styleBody,
  tiff,
  tileMatrixSet,
} from './cold-fixtures.ts';
import type { HostClient } from './cold-host-client.ts';
import { importStates } from './cold-import-states.ts';
import type { ColdStack } from './cold-lambda.ts';

/** Makes, through the host's API, what every route's request needs for `runs` runs. */
export async function prepare(
  stack: ColdStack,
  api: HostClient,
  runs: number,
  progress: (message: string) => void,
): Promise<{ fixed: Fixed; perRun: PerRun[]; loadImports: () => Promise<void> }> {
  const { must } = api;
  const ws = stack.workspaceId ?? ((await must('GET', '/workspaces/demo')).body.id as string);
  const wsName = (await must('GET', `/workspaces/${ws}`)).body.name as string;
  const W = `/workspaces/${ws}`;
  const serviceId =
    stack.serviceId ??
    ((await must('GET', `${W}/services`)).body.services as { id: string; name: string }[]).find(
      (x) => x.name === 'demo-postgis',
    )?.id;
  if (!serviceId) throw new Error('the demo workspace has no demo-postgis service');
  const tag = short();
  const connection = { ...stack.postgis, sslmode: 'disable' };
  /** A disabled PostGIS service of the workspace at `workspace` (a path). */
  const postgisService = async (workspace: string, name: string) =>
    (await must('POST', `${workspace}/services`, { name, type: 'postgis', connection, enabled: false })).body
      .id as string;
  // A draft: made without reading PostGIS (its first read after the host's start can be slow).
  const draftLayer = async (publicId: string) =>
    (
      await must('POST', `${W}/services/${serviceId}/layers`, {
        source_layer: 'places',
        public_id: publicId,
        enabled: false,
      })
    ).body.id as string;
  const layerGroup = async (publicId: string, title: string) =>
    (
      await must('POST', `${W}/layer-groups`, {
        public_id: publicId,
        title,
        members: [{ resource: layerPublicId }],
      })
    ).body.public_id as string;
  const style = async (name: string) =>
    (await must('POST', `${W}/styles`, styleBody(name))).body.name as string;
  const pngAsset = async (name: string) => {
    await must('PUT', `${W}/style-assets/${name}`, PNG, undefined, {
      'X-API-Key': stack.apiKey,
      'Content-Type': 'image/png',
    });
    return name;
  };
  const apiKey = async (name: string) =>
    (await must('POST', `${W}/apikeys`, { name, role_id: 'viewer' })).body.id as string;
  const role = async (id: string, name: string) => {
    await must('POST', '/roles', { id, name });
    return id;
  };
  const claimMapping = async (workspace: string, value: string, roleId: string) =>
    (
      await must('POST', `${workspace}/claim-mappings`, {
        claim_name: 'groups',
        claim_value: value,
        role_id: roleId,
      })
    ).body.id as string;

  progress('cold requests: making what the requests need through the host');
  const spare = await postgisService(W, `cold-spare-${tag}`);
  const layerPublicId = `cold-layer-${tag}`;
  const layer = await draftLayer(layerPublicId);
  const group = await layerGroup(`cold-group-${tag}`, 'Cold group');
  const fixedStyle = await style(`cold-style-${tag}`);
  const asset = await pngAsset(`cold-asset-${tag}`);
  const fixedKey = await apiKey(`cold-key-${tag}`);
  const fixedRole = await role(`cold-role-${tag}`, 'Cold role');
  const mapping = await claimMapping(W, `cold-${tag}`, 'viewer');

  // The raster mosaic: a root of GeoTIFFs under the host's mosaic directory, one granule in it.
  const root = join(stack.dataDir, 'mosaics', `cold-${tag}`);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'first.tif'), tiff(6, 47));
  for (let r = 0; r < runs; r++) {
    writeFileSync(join(root, `granule-${r}.tif`), tiff(6 + r, 46));
    writeFileSync(join(root, `harvest-${r}.tif`), tiff(6 + r, 45));
  }
  const mosaic = (
    await must('POST', `${W}/services`, {
      name: `cold-mosaic-${tag}`,
      type: 'raster_mosaic',
      connection: { root_uri: root },
    })
  ).body.id as string;
  const M = `${W}/services/${mosaic}/mosaic`;
  const granule = (await must('POST', `${M}/harvest`, { uris: ['first.tif'] })).body.added[0].id as string;

  // A finished deletion operation: a workspace with a service, deleted recursively.
  const doomed = (await must('POST', '/workspaces', { name: `cold-doomed-${tag}` })).body.id as string;
  await postgisService(`/workspaces/${doomed}`, 'doomed');
  const deletion = (await must('DELETE', `/workspaces/${doomed}?recurse=true`, undefined, 202)).body
    .id as string;

  // Imports, each driven by the host's own workflow runner into the state its request needs.
  const { created, uploaded, awaitingPlan, freePlan, ready, published, failed } = importStates(
    api,
    W,
    layerPublicId,
  );
  const waiting = await awaitingPlan();
  const importPlan = freePlan(waiting.plan);
  const notYet = new Error('not prepared yet');

  const issuer = await localIssuer(stack.dataDir);
  const sessionToken = await issuer.sign({ groups: [`cold-${tag}`] }, `cold-user-${tag}`, 3600);
  const login = async () => {
    const reply = await api.send('POST', '/auth/login', { token: sessionToken }, {});
    if (reply.status !== 201) throw new Error(`login answered ${reply.status}: ${reply.text.slice(0, 200)}`);
    return reply;
  };

  const perRun: PerRun[] = [];
  for (let r = 0; r < runs; r++) {
    progress(`cold requests: throwaway items of run ${r + 1}/${runs}`);
    const t = `${tag}-${r}`;
    const workspace = (await must('POST', '/workspaces', { name: `cold-gone-${t}` })).body.id as string;
    const service = await postgisService(W, `cold-gone-${t}`);
    const goneLayer = await draftLayer(`cold-gone-layer-${t}`);
    const goneGroup = await layerGroup(`cold-gone-group-${t}`, 'gone');
    const goneStyle = await style(`cold-gone-${t}`);
    const goneAsset = await pngAsset(`cold-gone-${t}`);
    const goneKey = await apiKey(`cold-gone-${short()}`);
    const revokedKey = await apiKey(`cold-gone-${short()}`);
    await must('DELETE', `${W}/apikeys/${revokedKey}`, undefined, 204);
    const goneRole = await role(`cold-gone-${t}`, 'gone');
    const policy = (
      await must('POST', `/roles/${fixedRole}/policies`, {
        workspace: '*',
        service: 'management',
        // A policy's id follows from what it grants: another operation each run.
        operation: routes.filter((op) => op.permission === 'read')[r % 20]?.operationId,
        action: 'read',
      })
    ).location
      ?.split('/')
      .at(-1) as string;
    const goneMapping = await claimMapping(W, `gone-${t}`, 'viewer');
    const goneGlobal = await claimMapping('', `cold-gone-${t}`, 'super_admin');
    const tms = `ColdGone${t.replace(/-/g, '')}`;
    await must('PUT', `/tile-matrix-sets/${tms}`, tileMatrixSet(tms));
    const goneGranule = (await must('POST', `${M}/harvest`, { uris: [`granule-${r}.tif`] })).body.added[0]
      .id as string;
    const logout = sessionHeaders((await login()).cookies);
    const refresh = sessionHeaders((await login()).cookies);
    const revoke = (await login()).body.session_id as string;
    const imports = {
      created: (await created()).id,
      uploaded: await uploaded(),
      awaitingPlan: (await awaitingPlan()).id,
      ready: notYet as string | Error,
      published: notYet as string | Error,
      failed: notYet as string | Error,
    };
    perRun.push({
      workspace,
      service,
      layer: goneLayer,
      group: goneGroup,
      style: goneStyle,
      asset: goneAsset,
      apiKey: goneKey,
      apiKeyRevoked: revokedKey,
      role: goneRole,
      policy,
      mapping: goneMapping,
      globalMapping: goneGlobal,
      tileMatrixSet: tms,
      granule: goneGranule,
      harvestFile: `harvest-${r}.tif`,
      jobMosaic: (
        await must('POST', `${W}/services`, {
          name: `cold-jobs-${t}`,
          type: 'raster_mosaic',
          connection: { root_uri: root },
        })
      ).body.id as string,
      jobWorkspace: (await must('POST', '/workspaces', { name: `cold-jobs-${t}` })).body.id as string,
      logout,
      refresh,
      revoke,
      imports,
    });
  }
  const result = {
    fixed: {
      ws,
      wsName,
      service: serviceId,
      spare,
      spareName: `cold-spare-${tag}`,
      layer,
      layerPublicId,
      group,
      style: fixedStyle,
      asset,
      apiKey: fixedKey,
      role: fixedRole,
      mapping,
      mosaic,
      granule,
      deletion,
      waiting: waiting.id,
      staged: notYet as string | Error,
      importPlan,
      sessionToken,
      connection,
    },
    perRun,
  };
  /** The imports the host must load (ready to publish, published, failed): made last, see LOADED. */
  const loadImports = async () => {
    progress('cold requests: imports the host loads (ready to publish, published, failed)');
    result.fixed.staged = await ready();
    for (const run of perRun) {
      run.imports.ready = await ready();
      run.imports.published = await published();
      run.imports.failed = await failed();
    }
  };
  return { ...result, loadImports };
}
