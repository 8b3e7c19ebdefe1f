import type { Workspace } from '../domain/workspaces.ts';

/** The API view of a workspace (internal `status` left out). */
export function presentWorkspace(ws: Workspace) {
  const { status: _status, ...rest } = ws;
  return rest;
}
