import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { exportJWK, importJWK, type JWK, SignJWT } from 'jose';
import { generate } from 'selfsigned';

/** Writes a file readable only by its owner (as is everything the host keeps in its data dir). */
function writeSecret(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
}

/** What a self-signed server certificate is made for. */
export interface CertificateSubject {
  /** Its subject's common name. */
  commonName: string;
  /** The DNS names and IP addresses it is valid for. */
  dnsNames: string[];
  ips: string[];
  /** How long it is valid from when it is made. */
  days: number;
}

/**
 * A self-signed TLS server certificate (EC P-256) and its key, made once, without any network, into
 * `keyPath` and `certPath` (their dir made if missing), then read from there: the local host's and
 * the tests' file servers'.
 */
export async function selfSignedCertificate(
  keyPath: string,
  certPath: string,
  subject: CertificateSubject,
): Promise<{ key: string; cert: string }> {
  if (!existsSync(keyPath) || !existsSync(certPath)) {
    mkdirSync(dirname(keyPath), { recursive: true, mode: 0o700 });
    mkdirSync(dirname(certPath), { recursive: true, mode: 0o700 });
    const pems = await generate([{ name: 'commonName', value: subject.commonName }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: new Date(Date.now() + subject.days * 24 * 3600 * 1000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            ...subject.dnsNames.map((value) => ({ type: 2, value })),
            ...subject.ips.map((ip) => ({ type: 7, ip })),
          ],
        },
      ],
    } as Parameters<typeof generate>[1]);
    writeSecret(keyPath, pems.private);
    // Not a secret, but the data dir's files are its owner's only (ADR 0106).
    writeSecret(certPath, pems.cert);
  }
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8') };
}

/** The self-signed certificate of the local HTTPS host, made on first start without any network. */
export function localCertificate(dataDir: string): Promise<{ key: string; cert: string }> {
  return selfSignedCertificate(join(dataDir, 'tls-key.pem'), join(dataDir, 'tls-cert.pem'), {
    commonName: '127.0.0.1',
    dnsNames: ['localhost'],
    ips: ['127.0.0.1'],
    days: 825,
  });
}

/** The local key that encrypts connection passwords (AES-256-GCM), made on first start. */
export function localSecretKey(dataDir: string): string {
  const path = join(dataDir, 'secret.key');
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeSecret(path, randomBytes(32).toString('base64'));
  }
  return readFileSync(path, 'utf8').trim();
}

/** The local OIDC issuer's signing key (ES256), made on first start. */
export interface LocalIssuer {
  issuer: string;
  audience: string;
  jwks: { keys: JWK[] };
  sign(claims: Record<string, unknown>, subject: string, ttlSeconds?: number): Promise<string>;
}

/** The issuer of a data dir whose host never said where it runs. */
export const LOCAL_ISSUER = 'https://127.0.0.1/geoplane-local-issuer';
export const LOCAL_AUDIENCE = 'geoplane-local';

/** The issuer URL the data dir's host serves (its tokens' `iss`). */
export function localIssuerUrl(dataDir: string): string {
  const file = join(dataDir, 'issuer-url');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : LOCAL_ISSUER;
}

/**
 * Loads (or creates) the local issuer key pair in the data dir. The host passes the URL it serves
 * the issuer at (`https://127.0.0.1:<port>/local-issuer`, so OIDC discovery resolves) and keeps it
 * in the data dir, where `npm run token` and the tests read it.
 */
export async function localIssuer(dataDir: string, issuerUrl?: string): Promise<LocalIssuer> {
  if (issuerUrl) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeSecret(join(dataDir, 'issuer-url'), issuerUrl);
  }
  const issuer = issuerUrl ?? localIssuerUrl(dataDir);
  const path = join(dataDir, 'issuer-key.json');
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = await exportJWK(privateKey);
    jwk.kid = `local-${Date.now().toString(36)}`;
    jwk.alg = 'ES256';
    writeSecret(path, JSON.stringify(jwk));
  }
  const privateJwk = JSON.parse(readFileSync(path, 'utf8')) as JWK;
  const { d: _d, ...publicJwk } = privateJwk;
  const key = await importJWK(privateJwk, 'ES256');
  return {
    issuer,
    audience: LOCAL_AUDIENCE,
    jwks: { keys: [{ ...publicJwk, use: 'sig' }] },
    async sign(claims, subject, ttlSeconds = 3600) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid as string, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(LOCAL_AUDIENCE)
        .setSubject(subject)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
        .sign(key);
    },
  };
}
