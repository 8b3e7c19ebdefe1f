/*
 * KMS's client as a sidecar (ADR 0100, 0153): built as its own module beside the bundles that seal
 * secrets (`infra/bundling.ts`) and imported by `kms-secret-box.ts` on the first encryption or
 * decryption — on AWS only (the local secret box is AES), and there only where a request seals
 * something: an idempotent answer, a service's password. The ~45 change routes otherwise carried
 * and evaluated the client (~27 KB) at every cold start. Third-party code only.
 */
export { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
