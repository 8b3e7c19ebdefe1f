import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgisGateway } from '#datasources/gateway.ts';
import { secretBox } from '#datasources/secret-box.ts';
import { createApiKey } from '#domain/api-keys.ts';
import { GLOBAL_SCOPE } from '#domain/claim-mappings.ts';
import type { PostgisConnectionInfo } from '#domain/datasource.ts';
import { createService } from '#domain/services.ts';
import { createWorkspace, resolveWorkspace } from '#domain/workspaces.ts';
import {
  apiKeyRepository,
  claimMappingRepository,
  serviceRepository,
  workspaceRepository,
} from '#wiring/repositories.ts';

/** Connection of the embedded PostGIS as the demo service uses it. */
export type DemoPostgis = PostgisConnectionInfo & { password: string };

/** `bootstrap.json` in the data dir. */
export interface Bootstrap {
  url: string;
  api_key: string;
  /** The embedded PostGIS, for creating services by hand (loopback only). */
  postgis?: DemoPostgis;
}

/** Registers the embedded PostGIS as `demo-postgis` in the demo workspace, unless it is there. */
async function demoService(postgis: DemoPostgis): Promise<void> {
  const demo = await resolveWorkspace(workspaceRepository(), 'demo');
  if (!demo || (await serviceRepository().findByName(demo.id, 'demo-postgis'))) return;
  await createService(
    { services: serviceRepository(), gateway: postgisGateway, secrets: secretBox() },
    { workspaceId: demo.id, body: { name: 'demo-postgis', type: 'postgis', connection: postgis } },
  );
}

function save(path: string, value: Bootstrap): void {
  writeFileSync(path, JSON.stringify(value, null, 2), { mode: 0o600 });
}

/**
 * First start: the demo workspace (with the demo PostGIS service) and a global super_admin key,
 * saved (only here) as bootstrap.json. Later starts read it back and create nothing new.
 */
export async function bootstrap(
  dataDir: string,
  url: string,
  postgis?: DemoPostgis,
): Promise<{ bootstrap: Bootstrap; created: boolean }> {
  const path = join(dataDir, 'bootstrap.json');
  // Token callers read the global mappings from its summary (ADR 0103), also in a catalog kept from
  // before summaries.
  await claimMappingRepository().summarize(GLOBAL_SCOPE);
  if (existsSync(path)) {
    const saved = JSON.parse(readFileSync(path, 'utf8')) as Bootstrap;
    const current = { ...saved, url, ...(postgis ? { postgis } : {}) };
    save(path, current);
    if (postgis) await demoService(postgis);
    return { bootstrap: current, created: false };
  }
  const workspaces = workspaceRepository();
  if (!(await resolveWorkspace(workspaces, 'demo'))) {
    await createWorkspace(
      { workspaces },
      { body: { name: 'demo', description: 'Demo workspace created on first start' } },
    );
  }
  if (postgis) await demoService(postgis);
  const { secret } = await createApiKey(
    { keys: apiKeyRepository() },
    {
      workspaceId: undefined,
      body: {
        name: 'bootstrap',
        role_id: 'super_admin',
        owner_name: 'local-bootstrap',
      },
    },
  );
  const result: Bootstrap = { url, api_key: secret, ...(postgis ? { postgis } : {}) };
  save(path, result);
  return { bootstrap: result, created: true };
}
