/**
 * Section 1 of `npm run bench`: request latency against the local host next to THE FLOOR — the
 * data and cases, the margin targets measured paired (ADR 0140) and the lists' phase profile.
 */

import { ROLES_CLAIM } from '#auth/authenticate.ts';
import { hashApiKey } from '#domain/api-keys.ts';
import { localIssuer } from '#infra/local/files.ts';
import { keys } from '#store/keys.ts';
import { call, type LatencyCase, type LatencyResult, measureLatency } from './latency.ts';
import { type ListFloor, listFloorParams } from './list-floors.ts';
import { measureListPhases } from './list-phases.ts';
import type { PhaseCaseResult, PhaseInput } from './list-phases-child.ts';
import { expect, type MainStack } from './main-stack.ts';
import { measurePairs, type Pair, type PairResult } from './paired.ts';
import {
  LAYER_LIST_LIMIT,
  LIST_LIMIT,
  PAIRED,
  PER_ROUND,
  PHASES,
  progress,
  ROUNDS,
  SERVICES,
  VALIDATED_PER_ROUND,
  VALIDATED_WARMUP,
  WARMUP,
  WORKSPACES,
} from './run-plan.ts';

// ---- targets ------------------------------------------------------------------------------------
export const READ_P50_MAX = 1.5;
/** Issue #15's read after authentication (ADR 0099): getWorkspace against the two-GetItem reference. */
export const FOLDED_READ_MAX = 1.2;
export const JWT_OVER_APIKEY_MAX = 1.1;
/** Issue #27: each list against its architecture's floor, the authorizer's read then its Query (ADR 0140). */
export const LIST_OVER_FLOOR_MAX = 1.15;

export interface LatencyOutcome {
  results: LatencyResult[];
  truncated: boolean;
  budgetMs: number;
  paired: { results: PairResult[]; rounds: number; truncated: boolean };
  phases: PhaseCaseResult[] | Error;
  workspaceCount: number;
  serviceCount: number;
  dynamoStartMs: number;
  hostStartMs: number;
}

/** Data of section 1 (workspaces, services, layers) and its cases. */
export async function prepareLatency(m: MainStack): Promise<{
  cases: LatencyCase[];
  /** The lists and their floors (ADR 0140), for the phase profile. */
  lists: { id: string; floor: ListFloor }[];
  workspaceCount: number;
  serviceCount: number;
  demo: string;
  serviceId: string;
}> {
  const { agent, auth, host, floorPort } = m;
  progress(`creating ${WORKSPACES} workspaces`);
  const ids: string[] = [];
  for (let i = 0; i < WORKSPACES; i++) {
    const name = `bench-${String(i).padStart(3, '0')}`;
    ids.push((await call(agent, 'POST', `${host.url}/workspaces`, auth, { name })).id);
  }
  const listed = await call(agent, 'GET', `${host.url}/workspaces?limit=1000`, auth);
  const workspaceCount = (listed.workspaces as unknown[]).length;
  const id = ids[Math.floor(ids.length / 2)] as string;

  // The demo workspace and its demo-postgis service (the embedded PostGIS), addressed by id.
  const demo = (await call(agent, 'GET', `${host.url}/workspaces/demo`, auth)).id as string;
  const services = `${host.url}/workspaces/${demo}/services`;
  const demoService = (
    (await call(agent, 'GET', services, auth)).services as { id: string; name: string }[]
  ).find((x) => x.name === 'demo-postgis');
  if (!demoService) throw new Error('the demo workspace has no demo-postgis service');
  progress(`creating ${SERVICES - 1} more services and ${LAYER_LIST_LIMIT} layers in demo-postgis`);
  for (let i = 1; i < SERVICES; i++) {
    // Disabled: stored without connecting (same item shape as an enabled one).
    await call(agent, 'POST', services, auth, {
      name: `bench-svc-${i}`,
      type: 'postgis',
      connection: m.postgis,
      enabled: false,
    });
  }
  const layers = `${services}/${demoService.id}/layers`;
  for (let i = 0; i < LAYER_LIST_LIMIT; i++) {
    await call(agent, 'POST', layers, auth, {
      source_layer: 'places',
      public_id: `bench-list-${String(i).padStart(3, '0')}`,
      enabled: false,
    });
  }
  const serviceCount = (await call(agent, 'GET', services, auth)).services.length as number;

  // A workspace viewer's token from the local issuer: the read path without the API-key lookup.
  const issuer = await localIssuer(m.dataDir);
  const token = await issuer.sign({ [ROLES_CLAIM]: { [id]: 'viewer' } }, 'bench-viewer', 3600);
  const bearer = { Authorization: `Bearer ${token}` };
  // A viewer by a workspace claim mapping (the usual way: role claims are untrusted by default),
  // resolved from the workspace's mapping summary in the authorizer's read (ADR 0103).
  await call(agent, 'POST', `${host.url}/workspaces/${id}/claim-mappings`, auth, {
    claim_name: 'groups',
    claim_value: 'bench-viewers',
    role_id: 'viewer',
  });
  const mappedToken = await issuer.sign({ groups: ['bench-viewers'] }, 'bench-mapped-viewer', 3600);
  const mapped = { Authorization: `Bearer ${mappedToken}` };
  const sameId = (body: unknown) => expect((body as { id?: string }).id === id, `expected workspace ${id}`);
  const count = (key: string, n: number) => (body: unknown) => {
    const got = (body as Record<string, unknown[] | undefined>)[key]?.length;
    expect(got === n, `expected ${n} ${key}, got ${got}`);
  };
  let created = 0;
  const layer = (enabled: boolean) => () =>
    JSON.stringify({
      source_layer: 'places',
      public_id: `bench-${enabled ? 'v' : 'd'}-${String(++created).padStart(5, '0')}`,
      enabled,
    });
  const isLayer = (enabled: boolean) => (body: unknown) => {
    const l = body as { enabled?: boolean; geometry_type?: string };
    expect(l.enabled === enabled, `expected a layer with enabled ${enabled}`);
    if (enabled) expect(l.geometry_type, 'a validated layer without geometry_type');
  };
  // Each list's floor (ADR 0140): what the authorizer reads for this API key on its path, then its Query.
  const keyHash = hashApiKey(host.apiKey as string);
  const lists: { id: string; floor: ListFloor }[] = [
    { id: 'listWorkspaces', floor: { list: 'workspaces', keyHash, limit: LIST_LIMIT } },
    // listServices' page size is its default, 1000 (the bench sends no limit).
    { id: 'listServices', floor: { list: 'services', keyHash, workspace: demo, limit: 1000 } },
    {
      id: 'listLayers',
      floor: { list: 'layers', keyHash, workspace: demo, service: demoService.id, limit: LAYER_LIST_LIMIT },
    },
  ];
  const floorOf = (list: string) =>
    `https://127.0.0.1:${floorPort}/floor-auth-list?${listFloorParams(
      (lists.find((l) => l.id === list) as { floor: ListFloor }).floor,
    )}`;
  const cases: LatencyCase[] = [
    { id: 'floor', url: `https://127.0.0.1:${floorPort}/floor/${id}`, check: sameId },
    { id: 'getWorkspace', url: `${host.url}/workspaces/${id}`, headers: auth, check: sameId },
    { id: 'getWorkspaceJwt', url: `${host.url}/workspaces/${id}`, headers: bearer, check: sameId },
    { id: 'getWorkspaceMapped', url: `${host.url}/workspaces/${id}`, headers: mapped, check: sameId },
    {
      id: 'listWorkspaces',
      url: `${host.url}/workspaces?limit=${LIST_LIMIT}`,
      headers: auth,
      check: count('workspaces', LIST_LIMIT),
    },
    { id: 'listServices', url: services, headers: auth, check: count('services', serviceCount) },
    {
      id: 'listLayers',
      url: `${layers}?limit=${LAYER_LIST_LIMIT}`,
      headers: auth,
      check: count('layers', LAYER_LIST_LIMIT),
    },
    {
      id: 'createLayerDraft',
      method: 'POST',
      url: layers,
      headers: auth,
      body: layer(false),
      status: 201,
      check: isLayer(false),
    },
    {
      id: 'createLayerValidated',
      method: 'POST',
      url: layers,
      headers: auth,
      body: layer(true),
      status: 201,
      warmup: VALIDATED_WARMUP,
      perRound: VALIDATED_PER_ROUND,
      check: isLayer(true),
    },
    { id: 'floor2', url: `https://127.0.0.1:${floorPort}/floor/${id}?gets=2`, check: sameId },
    {
      id: 'floorBatch',
      url: `https://127.0.0.1:${floorPort}/floor-batch?ids=${id},${ids[0]}`,
      check: sameId,
    },
    {
      id: 'floorServices',
      url:
        `https://127.0.0.1:${floorPort}/floor-layers?pk=${encodeURIComponent(keys.workspacePartition(demo))}` +
        `&prefix=${encodeURIComponent(keys.servicePrefix)}&limit=1000`,
      check: count('layers', serviceCount),
    },
    {
      id: 'floorList',
      url: `https://127.0.0.1:${floorPort}/floor-list?limit=${LIST_LIMIT}`,
      check: count('workspaces', LIST_LIMIT),
    },
    {
      id: 'floorLayers',
      url:
        `https://127.0.0.1:${floorPort}/floor-layers?pk=${encodeURIComponent(keys.workspacePartition(demo))}` +
        `&prefix=${encodeURIComponent(keys.layerPrefix(demoService.id))}&limit=${LAYER_LIST_LIMIT}`,
      check: count('layers', LAYER_LIST_LIMIT),
    },
    { id: 'floorAuthWorkspaces', url: floorOf('listWorkspaces'), check: count('workspaces', LIST_LIMIT) },
    { id: 'floorAuthServices', url: floorOf('listServices'), check: count('services', serviceCount) },
    { id: 'floorAuthLayers', url: floorOf('listLayers'), check: count('layers', LAYER_LIST_LIMIT) },
  ];
  return { cases, lists, workspaceCount, serviceCount, demo, serviceId: demoService.id };
}

/** The margin targets of section 1, each measured paired (ADR 0140): A, B and A / B at most. */
function pairsOf(cases: readonly LatencyCase[]): Pair[] {
  const c = (id: string) => {
    const found = cases.find((x) => x.id === id);
    if (!found) throw new Error(`no latency case '${id}'`);
    return found;
  };
  const list = (id: string, floor: string, what: string): Pair => ({
    id,
    what,
    a: c(id),
    b: c(floor),
    max: LIST_OVER_FLOOR_MAX,
  });
  return [
    {
      id: 'getWorkspace',
      what: `getWorkspace (API key) p50 ≤ ${READ_P50_MAX}× floor`,
      a: c('getWorkspace'),
      b: c('floor'),
      max: READ_P50_MAX,
    },
    {
      id: 'getWorkspaceJwt',
      what: `getWorkspace (viewer JWT) p50 ≤ ${JWT_OVER_APIKEY_MAX}× getWorkspace by API key`,
      a: c('getWorkspaceJwt'),
      b: c('getWorkspace'),
      max: JWT_OVER_APIKEY_MAX,
    },
    {
      id: 'getWorkspaceMapped',
      what: `getWorkspace (JWT, viewer by a workspace claim mapping) p50 ≤ ${JWT_OVER_APIKEY_MAX}× getWorkspace by API key`,
      a: c('getWorkspaceMapped'),
      b: c('getWorkspace'),
      max: JWT_OVER_APIKEY_MAX,
    },
    list(
      'listWorkspaces',
      'floorAuthWorkspaces',
      `listWorkspaces (limit ${LIST_LIMIT}) p50 ≤ ${LIST_OVER_FLOOR_MAX}× its floor (authorizer GetItem, then its Query)`,
    ),
    list(
      'listServices',
      'floorAuthServices',
      `listServices p50 ≤ ${LIST_OVER_FLOOR_MAX}× its floor (authorizer BatchGetItem, then its Query)`,
    ),
    list(
      'listLayers',
      'floorAuthLayers',
      `listLayers (limit ${LAYER_LIST_LIMIT}) p50 ≤ ${LIST_OVER_FLOOR_MAX}× its floor (authorizer BatchGetItem, then its Query)`,
    ),
  ];
}

/** Section 1's measurement: the unpaired block, the paired rounds, then the lists' phase profile. */
export async function measureSection1(
  m: MainStack,
  dynamoEndpoint: string,
  prepared: Awaited<ReturnType<typeof prepareLatency>>,
  budgetMs: () => number,
): Promise<LatencyOutcome> {
  progress(`latency: ${WARMUP} warm-up requests per case`);
  const measured = await measureLatency(
    m.agent,
    prepared.cases,
    { warmup: WARMUP, rounds: ROUNDS, perRound: PER_ROUND, budgetMs },
    progress,
  );
  const paired = await measurePairs(m.agent, pairsOf(prepared.cases), PAIRED, progress);
  const phaseInput: PhaseInput = {
    dataDir: m.dataDir,
    endpoint: dynamoEndpoint,
    table: 'geoplane',
    apiKey: m.host.apiKey as string,
    ...PHASES,
    cases: prepared.lists.map((l) => {
      const url = new URL((prepared.cases.find((c) => c.id === l.id) as LatencyCase).url);
      return { id: l.id, path: url.pathname + url.search, floor: l.floor };
    }),
  };
  const phases = await measureListPhases(phaseInput, progress);
  return {
    ...measured,
    paired,
    phases,
    workspaceCount: prepared.workspaceCount,
    serviceCount: prepared.serviceCount,
    dynamoStartMs: m.dynamoStartMs,
    hostStartMs: m.hostStartMs,
  };
}
