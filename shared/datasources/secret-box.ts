import { awsResource, config } from '#config/env.ts';
import type { SecretBox } from '#domain/secrets.ts';
import { kmsDecrypt, kmsEncrypt } from './kms-secret-box.ts';
import { AesGcmSecretBox } from './local-secret-box.ts';

let box: SecretBox | undefined;

/** The secret box of this deployment: KMS in AWS, AES-256-GCM with the local key otherwise. */
export function secretBox(): SecretBox {
  if (box) return box;
  const keyId = awsResource('KMS_KEY_ID');
  if (keyId) {
    // KMS's client is a sidecar loaded on the first call (ADR 0153): a dynamic import of the package
    // inside the bundle would keep every command (49 KB instead of 27, ADR 0100); a sidecar keeps
    // the two it needs out of the bundle altogether.
    box = {
      encrypt: (plaintext, context) => kmsEncrypt(keyId, plaintext, context),
      decrypt: (ciphertext, context) => kmsDecrypt(ciphertext, context),
    };
  } else {
    const localKey = config().GEOPLANE_SECRET_KEY;
    if (!localKey) throw new Error('GEOPLANE_SECRET_KEY (local) or KMS_KEY_ID (AWS) must be set');
    box = new AesGcmSecretBox(Buffer.from(localKey, 'base64'));
  }
  return box;
}
