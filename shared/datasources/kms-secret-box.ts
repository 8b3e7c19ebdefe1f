import type { KMSClient } from '@aws-sdk/client-kms';
import { sidecarClient } from '#telemetry/aws-clients.ts';

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

type KmsSdk = typeof import('./kms-sidecar.ts');

/** KMS's client, loaded and built on the first use (ADR 0153): the sidecar beside the bundle, or the package from source. */
const kmsClient = /* @__PURE__ */ sidecarClient(
  () =>
    (typeof GEOPLANE_BUNDLE !== 'undefined'
      ? import(new URL('./kms.sidecar.mjs', import.meta.url).href)
      : import('./kms-sidecar.ts')) as Promise<KmsSdk>,
  (sdk): KMSClient => new sdk.KMSClient({}),
);

/** Encrypts with KMS; the context is bound as the KMS encryption context. Format `kms.<base64url>`. */
export async function kmsEncrypt(
  keyId: string,
  plaintext: string,
  context: Record<string, string>,
): Promise<string> {
  const { sdk, client } = await kmsClient();
  const out = await client.send(
    new sdk.EncryptCommand({
      KeyId: keyId,
      Plaintext: Buffer.from(plaintext, 'utf8'),
      EncryptionContext: context,
    }),
  );
  return `kms.${Buffer.from(out.CiphertextBlob as Uint8Array).toString('base64url')}`;
}

/** Decrypts what `kmsEncrypt` made, with the same context. */
export async function kmsDecrypt(ciphertext: string, context: Record<string, string>): Promise<string> {
  if (!ciphertext.startsWith('kms.')) throw new Error('unknown secret format');
  const { sdk, client } = await kmsClient();
  const out = await client.send(
    new sdk.DecryptCommand({
      CiphertextBlob: Buffer.from(ciphertext.slice(4), 'base64url'),
      EncryptionContext: context,
    }),
  );
  return Buffer.from(out.Plaintext as Uint8Array).toString('utf8');
}
