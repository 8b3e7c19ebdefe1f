import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { awsClient } from '#telemetry/aws-clients.ts';

let client: KMSClient | undefined;
const kms = () => {
  client ??= awsClient(new KMSClient({}));
  return client;
};

/** Encrypts with KMS; the context is bound as the KMS encryption context. Format `kms.<base64url>`. */
export async function kmsEncrypt(
  keyId: string,
  plaintext: string,
  context: Record<string, string>,
): Promise<string> {
  const out = await kms().send(
    new EncryptCommand({
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
  const out = await kms().send(
    new DecryptCommand({
      CiphertextBlob: Buffer.from(ciphertext.slice(4), 'base64url'),
      EncryptionContext: context,
    }),
  );
  return Buffer.from(out.Plaintext as Uint8Array).toString('utf8');
}
