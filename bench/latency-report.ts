/** Section 1's part of the report (bench/results.md): latencies, the paired verdicts, the lists' phases. */
import type { LatencyResult } from './latency.ts';
import {
  FOLDED_READ_MAX,
  JWT_OVER_APIKEY_MAX,
  type LatencyOutcome,
  LIST_OVER_FLOOR_MAX,
  READ_P50_MAX,
} from './latency-section.ts';
import { listPhasesSection } from './list-phases.ts';
import { pairedOutcome, pairedSection } from './paired.ts';
import {
  LAYER_LIST_LIMIT,
  LIST_LIMIT,
  PAIRED,
  PER_ROUND,
  ROUNDS,
  VALIDATED_PER_ROUND,
  VALIDATED_WARMUP,
  WARMUP,
} from './run-plan.ts';
import { fixed, mean, median, percentile, ratio, table, verdict } from './stats.ts';

export interface Verdicts {
  lines: string[];
}

export function latencySection(outcome: LatencyOutcome, verdicts: Verdicts): string {
  const by = new Map(outcome.results.map((r) => [r.id, r]));
  const floor = by.get('floor') as LatencyResult;
  const f = {
    p50: percentile(floor.samples, 50),
    p95: percentile(floor.samples, 95),
    p99: percentile(floor.samples, 99),
  };
  const rows: string[][] = [];
  const describe: Record<string, [string, string]> = {
    floor: ['**FLOOR**: bare HTTPS server, 1 GetItem', 'GET /floor/{id}'],
    getWorkspace: ['getWorkspace (by id, API key)', 'GET /api/v1/workspaces/{id}'],
    getWorkspaceJwt: ['getWorkspace (by id, viewer JWT)', 'GET /api/v1/workspaces/{id}'],
    getWorkspaceMapped: [
      'getWorkspace (by id, JWT, viewer by a workspace claim mapping)',
      'GET /api/v1/workspaces/{id}',
    ],
    listWorkspaces: [
      `listWorkspaces (limit ${LIST_LIMIT}, API key)`,
      `GET /api/v1/workspaces?limit=${LIST_LIMIT}`,
    ],
    listServices: [
      `listServices (${outcome.serviceCount} services, API key)`,
      'GET /api/v1/workspaces/{id}/services',
    ],
    listLayers: [
      `listLayers (limit ${LAYER_LIST_LIMIT}, API key)`,
      `GET /api/v1/workspaces/{id}/services/{id}/layers?limit=${LAYER_LIST_LIMIT}`,
    ],
    createLayerDraft: [
      'createLayer, draft (`enabled: false`, API key)',
      'POST /api/v1/workspaces/{id}/services/{id}/layers',
    ],
    createLayerValidated: [
      'createLayer, validated against PostGIS (`enabled: true`)',
      'POST /api/v1/workspaces/{id}/services/{id}/layers',
    ],
    floor2: ['reference: floor with 2 GetItems', 'GET /floor/{id}?gets=2'],
    floorBatch: ['reference: floor doing one BatchGetItem of 2 items', 'GET /floor-batch?ids={id},{id}'],
    floorServices: ["reference: floor with listServices' Query", 'GET /floor-layers?prefix=SERVICE%23'],
    floorList: [
      `reference: floor with listWorkspaces' Query (limit ${LIST_LIMIT})`,
      `GET /floor-list?limit=${LIST_LIMIT}`,
    ],
    floorLayers: [
      `reference: floor with listLayers' Query (limit ${LAYER_LIST_LIMIT})`,
      `GET /floor-layers?limit=${LAYER_LIST_LIMIT}`,
    ],
    floorAuthWorkspaces: [
      `**listWorkspaces' floor**: the authorizer's GetItem, then its Query (limit ${LIST_LIMIT})`,
      `GET /floor-auth-list?list=workspaces&limit=${LIST_LIMIT}`,
    ],
    floorAuthServices: [
      "**listServices' floor**: the authorizer's BatchGetItem (3 keys), then its Query",
      'GET /floor-auth-list?list=services&limit=1000',
    ],
    floorAuthLayers: [
      `**listLayers' floor**: the authorizer's BatchGetItem (5 keys), then its Query (limit ${LAYER_LIST_LIMIT})`,
      `GET /floor-auth-list?list=layers&limit=${LAYER_LIST_LIMIT}`,
    ],
  };
  // Every target is a paired verdict (ADR 0140); the table shows which, and the paired result.
  const pairedBy = new Map(outcome.paired.results.map((r) => [r.pair.id, r]));
  const paired = pairedSection(outcome.paired, PAIRED, verdicts.lines);
  const targetOf: Record<string, string> = {
    getWorkspace: `≤ ${READ_P50_MAX}× floor`,
    getWorkspaceJwt: `≤ ${JWT_OVER_APIKEY_MAX}× API key`,
    getWorkspaceMapped: `≤ ${JWT_OVER_APIKEY_MAX}× API key`,
    listWorkspaces: `≤ ${LIST_OVER_FLOOR_MAX}× its floor`,
    listServices: `≤ ${LIST_OVER_FLOOR_MAX}× its floor`,
    listLayers: `≤ ${LIST_OVER_FLOOR_MAX}× its floor`,
  };
  const resultOf = (id: string) => {
    const r = pairedBy.get(id);
    if (!r) return '—';
    const result = pairedOutcome(r.ratios, r.pair.max);
    return result === 'straddles' ? '**FAIL** (no verdict)' : verdict(result === 'pass');
  };
  for (const r of outcome.results) {
    const p50 = percentile(r.samples, 50);
    const p95 = percentile(r.samples, 95);
    const p99 = percentile(r.samples, 99);
    const [what, request] = describe[r.id] ?? [r.id, ''];
    rows.push([
      what,
      `\`${request}\``,
      String(r.samples.length),
      fixed(p50),
      fixed(p95),
      fixed(p99),
      fixed(mean(r.samples)),
      r.id === 'floor' ? '1.00×' : ratio(p50, f.p50),
      r.id === 'floor' ? '1.00×' : ratio(p95, f.p95),
      r.id === 'floor' ? '1.00×' : ratio(p99, f.p99),
      targetOf[r.id] ? `${targetOf[r.id]}, paired` : '—',
      resultOf(r.id),
    ]);
  }
  // The round-trip targets of issue #15 (ADR 0099), each against the reference of its own shape.
  const p50Of = (id: string) => {
    const r = by.get(id);
    return r ? percentile(r.samples, 50) : Number.NaN;
  };
  const against = (what: string, id: string, max: number, ref: string, refName: string) => {
    const pass = p50Of(id) <= max * p50Of(ref);
    verdicts.lines.push(
      `- ${what} p50 ≤ ${max}× ${refName}: ${verdict(pass)} (${ratio(p50Of(id), p50Of(ref))}: ${fixed(p50Of(id))} ms vs ${fixed(p50Of(ref))} ms)`,
    );
  };
  against('getWorkspace (API key)', 'getWorkspace', FOLDED_READ_MAX, 'floor2', 'floor with 2 GetItems');
  // Where the lists' time goes, against their paired p50s over HTTPS.
  const https = new Map(
    ['listWorkspaces', 'listServices', 'listLayers'].flatMap((id) => {
      const r = pairedBy.get(id);
      return r ? [[id, { host: median(r.a), floor: median(r.b), max: r.pair.max }] as const] : [];
    }),
  );
  const phases = listPhasesSection(outcome.phases, https, (id) => describe[id]?.[0] ?? id);
  const reconnects = outcome.results.filter((r) => r.reconnects > 0);
  return [
    '## 1. Request latency: local host vs the floor',
    '',
    `Sequential requests over one keep-alive HTTPS connection per server (node:https Agent, the host's self-signed certificate as \`ca\`), ` +
      `${WARMUP} warm-up requests per case, then up to ${ROUNDS} rounds × ${PER_ROUND} requests per case with the case order rotating per round ` +
      `(validated creates: ${VALIDATED_WARMUP} warm-up, ${ROUNDS} × ${VALIDATED_PER_ROUND}, since PGlite serves one backend). ` +
      `Time from the request call to the last byte of the answer, in ms; percentiles are nearest-rank. ` +
      `The host runs \`infra/local/main.ts\` (API Gateway emulation, the REQUEST authorizer with its API-key read — a GetItem of the credential, ` +
      "or with a workspace in the path one BatchGetItem of the credential and the path's workspace and service (ADR 0099) — then the handler) " +
      `with the rate limit lifted; the floor and the host use the same DynamoDB Local (on disk) and table, ` +
      `reading the same workspace item with ConsistentRead. ${outcome.workspaceCount} workspaces exist. ` +
      'Service and layer cases use the demo workspace and its `demo-postgis` service (the embedded PostGIS, PGlite ' +
      `in a worker thread of the host): ${outcome.serviceCount} services, ${LAYER_LIST_LIMIT} draft layers before the run, ` +
      'and every measured create adds one (unique `public_id`, `source_layer: places`). ' +
      'Writes have no target; their ratios to the one-GetItem floor are for orientation only. ' +
      "**Each list's floor** (ADR 0140) is the floor server doing what the authorizer reads for the same API key on the list's path " +
      '(a consistent GetItem of the credential for listWorkspaces; one consistent BatchGetItem of the credential, the workspace by id ' +
      "and by name marker, and for listLayers the service by id and by name marker) THEN the list's own Query (same key condition, " +
      'filter, Limit, no projection, eventually consistent), as `bench/list-floors.ts` builds both; the phase profile below checks ' +
      "that the host sends exactly these two requests. The older references (a list's Query alone, two GetItems, one BatchGetItem) " +
      'stay for orientation. **Targets are judged on the paired rounds below**, not on this table: its blocks run at different moments.',
    '',
    table(
      [
        'case',
        'request',
        'n',
        'p50',
        'p95',
        'p99',
        'mean',
        'p50 × floor',
        'p95 × floor',
        'p99 × floor',
        'target',
        'result',
      ],
      rows,
      '---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---',
    ),
    '',
    ...(outcome.truncated
      ? [
          `Stopped early at the time budget (${fixed(outcome.budgetMs / 1000, 0)} s of measured rounds): fewer samples than planned.\n`,
        ]
      : []),
    reconnects.length
      ? `New connections during measurement (server closed an idle keep-alive socket): ${reconnects.map((r) => `${r.id} ${r.reconnects}`).join(', ')}.\n`
      : 'No request during measurement had to open a new connection.\n',
    `Startup (not measured above): DynamoDB Local ${fixed(outcome.dynamoStartMs / 1000, 1)} s (beside the bundling), local host with the embedded PostGIS (first init, ` +
      `while the scaling stack of section 3 was seeded beside it) ${fixed(outcome.hostStartMs / 1000, 1)} s.`,
    '',
    paired,
    '',
    phases,
  ].join('\n');
}
