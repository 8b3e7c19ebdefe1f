/** Built-in workspace roles. */
export type WorkspaceRole = 'admin' | 'editor' | 'viewer';

/** Who is calling: produced by the authorizer, carried to handlers as primitive context values. */
export interface Principal {
  /** Stable id: `apikey:<id>` or `jwt:<sub>`. */
  id: string;
  /** Display subject (key name or owner, token `sub`). */
  subject: string;
  authMethod: 'apikey' | 'jwt';
  superAdmin: boolean;
  /** Role per workspace, keyed by workspace id or name. */
  roles: Record<string, WorkspaceRole>;
  apiKeyId?: string;
  /** Rate-limit bucket: `ws:<id>` for a workspace key, `global` otherwise. */
  usageKey: string;
}

/** API Gateway authorizer context: string values only. */
export type PrincipalContext = Record<string, string>;

/** Encodes a principal as authorizer context values. */
export function toContext(p: Principal): PrincipalContext {
  return {
    subject: p.subject,
    authMethod: p.authMethod,
    superAdmin: String(p.superAdmin),
    roles: JSON.stringify(p.roles),
    apiKeyId: p.apiKeyId ?? '',
    usageKey: p.usageKey,
  };
}

/** Decodes the authorizer context of an API Gateway event; undefined when absent (public routes). */
export function fromContext(ctx: Record<string, unknown> | null | undefined): Principal | undefined {
  if (!ctx || typeof ctx.principalId !== 'string' || ctx.principalId === '') return undefined;
  const str = (k: string) => (ctx[k] === undefined || ctx[k] === null ? '' : String(ctx[k]));
  let roles: Record<string, WorkspaceRole> = {};
  try {
    const parsed = JSON.parse(str('roles') || '{}');
    if (parsed && typeof parsed === 'object') roles = parsed;
  } catch {
    roles = {};
  }
  return {
    id: ctx.principalId,
    subject: str('subject'),
    authMethod: str('authMethod') === 'jwt' ? 'jwt' : 'apikey',
    superAdmin: str('superAdmin') === 'true',
    roles,
    ...(str('apiKeyId') ? { apiKeyId: str('apiKeyId') } : {}),
    usageKey: str('usageKey') || 'global',
  };
}
