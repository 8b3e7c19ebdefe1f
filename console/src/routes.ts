/** The console's URLs, in one place: pages link with these, the router matches their patterns. */
export const BASE = '/console';

const enc = encodeURIComponent;

export const paths = {
  home: `${BASE}/`,
  login: `${BASE}/login`,
  callback: `${BASE}/callback`,
  workspaces: `${BASE}/workspaces`,
  workspace: (ws: string) => `${BASE}/workspaces/${enc(ws)}`,
  services: (ws: string) => `${BASE}/workspaces/${enc(ws)}/services`,
  service: (ws: string, service: string) => `${BASE}/workspaces/${enc(ws)}/services/${enc(service)}`,
  workspaceLayers: (ws: string) => `${BASE}/workspaces/${enc(ws)}/layers`,
  layers: (ws: string, service: string) => `${BASE}/workspaces/${enc(ws)}/services/${enc(service)}/layers`,
  layer: (ws: string, service: string, layer: string) =>
    `${BASE}/workspaces/${enc(ws)}/services/${enc(service)}/layers/${enc(layer)}`,
  mosaic: (ws: string, service: string) => `${BASE}/workspaces/${enc(ws)}/services/${enc(service)}/mosaic`,
  layerGroups: (ws: string) => `${BASE}/workspaces/${enc(ws)}/layer-groups`,
  styles: (ws: string) => `${BASE}/workspaces/${enc(ws)}/styles`,
  styleAssets: (ws: string) => `${BASE}/workspaces/${enc(ws)}/style-assets`,
  settings: (ws: string) => `${BASE}/workspaces/${enc(ws)}/settings`,
  tileCache: (ws: string) => `${BASE}/workspaces/${enc(ws)}/tile-cache`,
  imports: (ws: string) => `${BASE}/workspaces/${enc(ws)}/imports`,
  importJob: (ws: string, id: string) => `${BASE}/workspaces/${enc(ws)}/imports/${enc(id)}`,
  apiKeys: (ws: string) => `${BASE}/workspaces/${enc(ws)}/apikeys`,
  claimMappings: (ws: string) => `${BASE}/workspaces/${enc(ws)}/claim-mappings`,
  workspaceAudit: (ws: string) => `${BASE}/workspaces/${enc(ws)}/audit`,
  deletions: `${BASE}/deletions`,
  deletion: (id: string) => `${BASE}/deletions/${enc(id)}`,
  tileMatrixSets: `${BASE}/tile-matrix-sets`,
  roles: `${BASE}/roles`,
  globalClaimMappings: `${BASE}/claim-mappings`,
  audit: `${BASE}/audit`,
  integrity: `${BASE}/integrity`,
  caches: `${BASE}/caches`,
  sessions: `${BASE}/sessions`,
};

/** The pages of one workspace, in the order of its navigation. */
export const workspacePages = [
  ['Overview', paths.workspace],
  ['Services', paths.services],
  ['Layers', paths.workspaceLayers],
  ['Layer groups', paths.layerGroups],
  ['Styles', paths.styles],
  ['Style assets', paths.styleAssets],
  ['Settings', paths.settings],
  ['Tile cache', paths.tileCache],
  ['Imports', paths.imports],
  ['API keys', paths.apiKeys],
  ['Claim mappings', paths.claimMappings],
  ['Audit', paths.workspaceAudit],
] as const;
