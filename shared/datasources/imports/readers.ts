/**
 * The login of each published import (ADR 0105): `geoplane_imp_<hex>`, which may read its own
 * schema `import_<hex>` and nothing else of the import database. Its password is derived from the
 * loader's secret and the import id (HMAC-SHA-256), so the publish step that creates the login and
 * the step that stores it in the service agree without passing a secret through the workflow's
 * state; the server is sent only a SCRAM-SHA-256 verifier, never the password.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

/** Every import reader login starts so; services may use such a login only for its own schema. */
export const READER_LOGIN_PREFIX = 'geoplane_imp_';
/** Where the SECURITY DEFINER functions that create and drop reader logins live (importRolesSql). */
export const READER_ROLES_SCHEMA = 'geoplane_import_roles';
const HEX = /^[0-9a-f]{32}$/;
/** PostgreSQL's default scram_iterations. */
const SCRAM_ITERATIONS = 4096;

/** The 32 hex digits of an import id (its UUID without dashes, lower case). */
export function importHex(importId: string): string {
  const hex = importId.replaceAll('-', '').toLowerCase();
  if (!HEX.test(hex)) throw new Error(`not an import id: ${JSON.stringify(importId)}`);
  return hex;
}

/** The login a published import's service connects as. */
export function readerLogin(importId: string): string {
  return `${READER_LOGIN_PREFIX}${importHex(importId)}`;
}

/** The login's password: HMAC-SHA-256(loader secret, import id), base64url (43 characters). */
export function readerPassword(secret: string, importId: string): string {
  if (secret.length === 0) throw new Error('the import database has no loader secret');
  return createHmac('sha256', secret)
    .update(`geoplane import reader v1\0${importHex(importId)}`)
    .digest('base64url');
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802, RFC 7677): given as the
 * PASSWORD of CREATE/ALTER ROLE it is stored as is, so the cleartext never reaches the server or
 * its statement log. `password` must be ASCII (SASLprep leaves it unchanged): ours are base64url.
 */
export function scramVerifier(password: string, salt = randomBytes(16)): string {
  const salted = pbkdf2Sync(password, salt, SCRAM_ITERATIONS, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest('base64');
  const serverKey = createHmac('sha256', salted).update('Server Key').digest('base64');
  return `SCRAM-SHA-256$${SCRAM_ITERATIONS}:${salt.toString('base64')}$${storedKey}:${serverKey}`;
}

/**
 * True when `user` is the reader login of an import whose published schema is not exactly
 * `schemas` — a service may connect as an import's login only to read that import.
 */
export function isForeignReaderLogin(user: string, schemas: readonly string[] | undefined): boolean {
  if (!user.toLowerCase().startsWith(READER_LOGIN_PREFIX)) return false;
  const hex = user.slice(READER_LOGIN_PREFIX.length);
  return !(HEX.test(hex) && schemas?.length === 1 && schemas[0] === `import_${hex}`);
}
