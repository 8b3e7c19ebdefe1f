import { config } from '../config/env.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { AesGcmSecretBox } from './local-secret-box.ts';

let box: SecretBox | undefined;

/** The secret box of this deployment: KMS in AWS, AES-256-GCM with the local key otherwise. */
export function secretBox(): SecretBox {
  if (box) return box;
  const cfg = config();
  if (cfg.KMS_KEY_ID) {
    const keyId = cfg.KMS_KEY_ID;
    // Loaded only where KMS is configured, so local handlers don't pay for the client.
    box = {
      async encrypt(plaintext, context) {
        const { kmsEncrypt } = await import('./kms-secret-box.ts');
        return kmsEncrypt(keyId, plaintext, context);
      },
      async decrypt(ciphertext, context) {
        const { kmsDecrypt } = await import('./kms-secret-box.ts');
        return kmsDecrypt(ciphertext, context);
      },
    };
  } else {
    if (!cfg.GEOPLANE_SECRET_KEY)
      throw new Error('GEOPLANE_SECRET_KEY (local) or KMS_KEY_ID (AWS) must be set');
    box = new AesGcmSecretBox(Buffer.from(cfg.GEOPLANE_SECRET_KEY, 'base64'));
  }
  return box;
}
