/** A rate-limit identity of API Gateway usage plans (not a credential: clients never send it). */
export interface UsageKey {
  id: string;
  value: string;
}

/** Port: provisions one usage key per workspace (AWS: an API Gateway API key in the usage plan). */
export interface UsageKeyProvisioner {
  /** A new key for the workspace, or undefined where usage plans don't exist (local mode). */
  create(workspaceId: string): Promise<UsageKey | undefined>;
  remove(id: string): Promise<void>;
}
