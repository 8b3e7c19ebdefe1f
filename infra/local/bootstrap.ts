import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey } from '../../shared/domain/api-keys.ts';
import { createWorkspace, resolveWorkspace } from '../../shared/domain/workspaces.ts';
import { apiKeyRepository, workspaceRepository } from '../../shared/store/repositories.ts';

/** `bootstrap.json` in the data dir. */
export interface Bootstrap {
  url: string;
  api_key: string;
}

/**
 * First start: the demo workspace and a global super_admin key, saved (only here) as
 * bootstrap.json. Later starts read it back and create nothing.
 */
export async function bootstrap(
  dataDir: string,
  url: string,
): Promise<{ bootstrap: Bootstrap; created: boolean }> {
  const path = join(dataDir, 'bootstrap.json');
  if (existsSync(path)) {
    const saved = JSON.parse(readFileSync(path, 'utf8')) as Bootstrap;
    if (saved.url !== url) writeFileSync(path, JSON.stringify({ ...saved, url }, null, 2), { mode: 0o600 });
    return { bootstrap: { ...saved, url }, created: false };
  }
  const workspaces = workspaceRepository();
  if (!(await resolveWorkspace(workspaces, 'demo'))) {
    await createWorkspace(workspaces, { name: 'demo', description: 'Demo workspace created on first start' });
  }
  const { secret } = await createApiKey(apiKeyRepository(), undefined, {
    name: 'bootstrap',
    role_id: 'super_admin',
    owner_name: 'local-bootstrap',
  });
  const result = { url, api_key: secret };
  writeFileSync(path, JSON.stringify(result, null, 2), { mode: 0o600 });
  return { bootstrap: result, created: true };
}
