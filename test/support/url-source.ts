import type { RequestListener } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { selfSignedCertificate } from '#infra/local/files.ts';

/**
 * The loopback address test hosts allow for import URLs (GEOPLANE_ALLOWED_IMPORT_URL_HOSTS, ADR
 * 0129): the URL-import tests serve their files here. Every other loopback address stays refused,
 * so 127.0.0.1 and `localhost` show the default policy on the same host.
 */
export const URL_SOURCE_HOST = '127.0.0.3';

/** A host's time limit for one URL fetch in the tests (IMPORT_URL_TIMEOUT_MS). */
export const URL_SOURCE_TIMEOUT_MS = 6_000;

/** The TLS key and self-signed certificate of the tests' file servers (for 127.0.0.1, 127.0.0.3, localhost, files.test). */
export interface UrlSourceTls {
  key: string;
  cert: string;
  certPath: string;
}

/** Makes (once per directory) the file servers' certificate, which test hosts trust through GEOPLANE_IMPORT_URL_CA_FILE. */
export async function urlSourceTls(dir: string): Promise<UrlSourceTls> {
  const certPath = join(dir, 'url-source-cert.pem');
  const pems = await selfSignedCertificate(join(dir, 'url-source-key.pem'), certPath, {
    commonName: 'geoplane-test-url-source',
    dnsNames: ['localhost', 'files.test'],
    ips: ['127.0.0.1', URL_SOURCE_HOST],
    days: 30,
  });
  return { ...pems, certPath };
}

/** The environment that lets a test host read URLs from the tests' file servers (and only there). */
export async function urlSourceEnv(dataDir: string): Promise<Record<string, string>> {
  const tls = await urlSourceTls(dataDir);
  return {
    GEOPLANE_ALLOWED_IMPORT_URL_HOSTS: URL_SOURCE_HOST,
    GEOPLANE_IMPORT_URL_CA_FILE: tls.certPath,
    IMPORT_URL_TIMEOUT_MS: String(URL_SOURCE_TIMEOUT_MS),
  };
}

/** An HTTPS server on `host` (a free port) with the tests' certificate. */
export async function startFileServer(
  tls: Pick<UrlSourceTls, 'key' | 'cert'>,
  handler: RequestListener,
  host = URL_SOURCE_HOST,
): Promise<{ server: Server; port: number; origin: string; close(): Promise<void> }> {
  const server = createServer({ key: tls.key, cert: tls.cert }, handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    origin: `https://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
