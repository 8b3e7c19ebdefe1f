/** The requests of section 2's cold requests: their shape, and the kit each area's requests are written with. */

import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import type { Fixed, PerRun } from './cold-fixtures.ts';

/** One request to a route, as the proxy event carries it. */
export interface RouteRequest {
  method: string;
  path: string;
  pathParameters: Record<string, string> | null;
  query?: Record<string, string>;
  body?: unknown;
  /** Raw bytes (base64 in the event) with their content type. */
  bytes?: { data: Buffer; contentType: string };
  /** The caller's headers instead of the super_admin key (`{}`: none, a public route). */
  as?: Record<string, string>;
}

/** What one run's requests made that later requests of the same run use (a queued job's id). */
export type Made = Map<string, string>;

/** A route and how each run requests it. */
export interface Case {
  operation: Operation;
  request: (run: number, made: Made) => RouteRequest;
  /** Keeps what a later request of the run needs from this one's answer. */
  keep?: (body: any, made: Made) => void;
}

/** The route table by operationId. */
export const byId = new Map(routes.map((op) => [op.operationId, op]));

/** What the requests of every route are written with: the run's items, and the shapes they repeat. */
export function kit(f: Fixed, perRun: PerRun[]) {
  const W = { workspace: f.ws };
  const S = { ...W, service: f.service };
  const M = { ...W, service: f.mosaic };
  const example = (id: string) => byId.get(id)?.examples?.request as Record<string, unknown>;
  const get =
    (params: Record<string, string> | null = null, query?: Record<string, string>) =>
    () => ({
      method: 'GET',
      path: '',
      pathParameters: params,
      ...(query ? { query } : {}),
    });
  const run = (r: number) => perRun[r] as PerRun;
  const made = (m: Made, key: string) => {
    const v = m.get(key);
    if (!v) throw new Error(`needs the ${key} an earlier request of this run makes (it failed)`);
    return v;
  };
  const prepared = (item: string | Error) => {
    if (item instanceof Error) throw item;
    return item;
  };
  const publicGet = () => ({ method: 'GET', path: '', pathParameters: null, as: {} });
  /** A request of `method` with the route's parameters of run r (and `more`: its body, query or caller). */
  const call =
    (
      method: string,
      params: (r: number, m: Made) => Record<string, string> | null,
      more?: (r: number, m: Made) => Omit<RouteRequest, 'method' | 'path' | 'pathParameters'>,
    ) =>
    (r: number, m: Made): RouteRequest => ({
      method,
      path: '',
      pathParameters: params(r, m),
      ...more?.(r, m),
    });
  return { f, W, S, M, example, get, run, made, prepared, publicGet, call };
}

/** The requests' kit (see kit). */
export type Kit = ReturnType<typeof kit>;

/** A settings example without the names of the example's own styles and layers. */
export function settingsBody(example: Record<string, unknown>, f: Fixed): Record<string, unknown> {
  const body = { ...example };
  if ('default_style' in body) body.default_style = f.style;
  return body;
}
