/**
 * The console's one reader of the data plane (the workspace's OGC API, DESIGN §8a): a separate API
 * with its own OpenAPI document, not the management API the generated client covers. MapLibre
 * fetches the tiles themselves; this reads the JSON documents beside them (TileJSON, collection,
 * items, a style), with the session cookie (same origin).
 */

/** A document, or why it could not be read. */
export type Fetched = { ok: true; body: unknown } | { ok: false; reason: string };

/** GET a JSON document of the data plane. */
export async function getJson(url: string): Promise<Fetched> {
  try {
    const response = await fetch(url, {
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
    });
    if (!response.ok) return { ok: false, reason: `HTTP ${response.status}` };
    return { ok: true, body: await response.json() };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
