/** Port: encrypts connection secrets at rest (AWS: KMS; local: AES-256-GCM). */
export interface SecretBox {
  /** Ciphertext bound to `context` (e.g. the service id): it only decrypts with the same context. */
  encrypt(plaintext: string, context: Record<string, string>): Promise<string>;
  decrypt(ciphertext: string, context: Record<string, string>): Promise<string>;
}
