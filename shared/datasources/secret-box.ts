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
    // A static import (ADR 0100): esbuild keeps every export of a dynamically imported module's
    // dependencies (the KMS client's every command: 49 KB instead of 27 KB in each change's bundle).
    // The client itself is still built only on the first call.
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
