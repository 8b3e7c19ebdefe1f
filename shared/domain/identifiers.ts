/**
 * The patterns of the names and ids the API takes, each in one place: the API's schemas check
 * them (shared/api/schemas.ts, the role and import schemas), and the domain, the authorizer and
 * the import database check them again where a value arrives without a schema (a path's id or
 * name, a token's claim, a derived service name, a stored reason).
 */

/**
 * The names rule of DESIGN §5: workspace, service, style and tile matrix set names, and the public
 * ids of layers and layer groups. 1–64 characters: a letter or digit, then letters, digits, `.`,
 * `_` or `-`.
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What a name that breaks the rule is told. */
export const NAME_RULE = 'must be 1-64 characters: a letter or digit, then letters, digits, ".", "_" or "-"';

/** A custom role's id: 2–64 characters, a lower-case letter, then lower-case letters, digits, `_` or `-`. */
export const ROLE_ID_PATTERN = /^[a-z][a-z0-9_-]{1,63}$/;

/** What a role id that breaks the rule is told. */
export const ROLE_ID_RULE =
  'must be 2-64 characters: a lower-case letter, then lower-case letters, digits, "_" or "-"';

/** A UUID (the ids of workspaces, services, layers, imports…), any case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An API key as it is presented: `gpk_` and 43 base64url characters (32 random bytes). */
export const API_KEY_PATTERN = /^gpk_[A-Za-z0-9_-]{43}$/;

/** A reason code shown as it is: snake_case, as every reason of this API (DESIGN §7). */
export const REASON_CODE_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
