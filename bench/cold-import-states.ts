/**
 * Imports in the states section 2's import routes need (created, uploaded, awaiting a plan, ready
 * to publish, published, failed), each driven by the local host's own workflow runner.
 */
import { points, short } from './cold-fixtures.ts';
import type { HostClient } from './cold-host-client.ts';

/** Makers of imports in the workspace at `W` whose layer clashes with `layerPublicId` (so discovery stops at awaiting_plan). */
export function importStates(api: HostClient, W: string, layerPublicId: string) {
  const { must } = api;
  const I = `${W}/imports`;
  const until = async (id: string, statuses: string[]) => {
    const end = Date.now() + 60_000;
    for (;;) {
      const got = (await must('GET', `${I}/${id}`)).body;
      if (statuses.includes(got.status)) return got;
      if (Date.now() > end) throw new Error(`import ${id} stayed ${got.status} (waiting for ${statuses})`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const file = points(20);
  const created = async () => {
    // Its layer's public id is the cold layer's: discovery stops it at awaiting_plan (the clash).
    const made = await must('POST', I, {
      name: `cold-${short()}`,
      source: { kind: 'upload', filename: 'points.geojson', size_bytes: file.length },
      layers: [{ public_id: layerPublicId }],
    });
    return made.body as { id: string; upload: { url: string; fields: Record<string, string> } };
  };
  const uploaded = async () => {
    const made = await created();
    const boundary = `----cold${short()}`;
    const parts = Object.entries(made.upload.fields).map(
      ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
    );
    const form = Buffer.concat([
      Buffer.from(parts.join('')),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="points.geojson"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const sent = await api.send(
      'POST',
      '',
      form,
      { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      made.upload.url,
    );
    if (sent.status !== 204)
      throw new Error(`the upload answered ${sent.status}: ${sent.text.slice(0, 200)}`);
    return made.id;
  };
  const awaitingPlan = async () => {
    const id = await uploaded();
    await must('POST', `${I}/${id}/start`, undefined, 202);
    const got = await until(id, ['awaiting_plan', 'ready_to_publish', 'failed']);
    if (got.status !== 'awaiting_plan') throw new Error(`import ${id} is ${got.status}, not awaiting_plan`);
    return { id, plan: got.plan };
  };
  /** The plan of an import awaiting one, with a free public id. */
  const freePlan = (plan: { layers: Record<string, unknown>[] }, srid?: number) => ({
    layers: plan.layers.map((l) => ({
      ...l,
      public_id: `cold-import-${short()}`,
      ...(srid ? { source_srid: srid } : {}),
    })),
  });
  // The states after a load: the host's own workflow runner loads the file into its PostGIS. When
  // it can't, the requests that need such an import fail with the reason (no second attempt).
  let loadFailure: Error | undefined;
  const loaded = async (make: () => Promise<string>): Promise<string | Error> => {
    if (loadFailure) return loadFailure;
    try {
      return await make();
    } catch (error) {
      loadFailure = new Error(`not prepared: the host did not load an import (${(error as Error).message})`);
      return loadFailure;
    }
  };
  const planned = async (srid?: number) => {
    const { id, plan } = await awaitingPlan();
    await must('PUT', `${I}/${id}/plan`, freePlan(plan, srid));
    return id;
  };
  const settle = async (id: string, status: string) => {
    try {
      await until(id, [status]);
    } catch (error) {
      // Stopped, so a load that keeps retrying does not hold the PostGIS while the requests run.
      await api.send('DELETE', `${I}/${id}`);
      throw error;
    }
    return id;
  };
  const ready = () => loaded(async () => settle(await planned(), 'ready_to_publish'));
  const published = () =>
    loaded(async () => {
      const id = await settle(await planned(), 'ready_to_publish');
      await must('POST', `${I}/${id}/publish`, undefined, 202);
      return settle(id, 'published');
    });
  const failed = () => loaded(async () => settle(await planned(998999), 'failed'));
  return { created, uploaded, awaitingPlan, freePlan, ready, published, failed };
}
