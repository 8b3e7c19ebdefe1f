import type { ApiKeyCredential } from './api-keys.ts';
import type { RoleRule } from './claim-mappings.ts';
import type { KnownService } from './services.ts';
import type { KnownWorkspace } from './workspaces.ts';

/** What the authorizer reads for one request (ADR 0099): the API key's credential and the path's targets. */
export interface TargetQuery {
  /** SHA-256 hex of the request's API key, when it carries one. */
  keyHash?: string;
  /** The `{workspace}` path parameter (id or name). */
  workspace?: string;
  /** The `{service}` path parameter (id or name), under `workspace`. */
  service?: string;
  /** Also read the claim mapping summaries of the global scope and the workspace (a token's caller, ADR 0103). */
  claimRules?: boolean;
}

/**
 * What that read found. `credential` is absent when the key has no credential item; `workspace`
 * and `service` are absent when the lookup could not decide them within its round trips (the
 * handler then reads them as before), and carry `undefined` records when they do not exist.
 */
export interface TargetRecords {
  credential?: ApiKeyCredential;
  workspace?: KnownWorkspace;
  service?: KnownService;
  /**
   * The mappings of the global scope and of the resolved workspace, from their summaries (ADR
   * 0103); absent when a summary was not asked for, does not exist yet or overflowed (the caller
   * then queries the mappings as before).
   */
  globalRules?: RoleRule[];
  workspaceRules?: { workspaceId: string; rules: RoleRule[] };
}

/** Port: the authorizer's one round trip (one BatchGetItem; a second only for names). */
export interface TargetLookup {
  lookUp(query: TargetQuery): Promise<TargetRecords>;
}
