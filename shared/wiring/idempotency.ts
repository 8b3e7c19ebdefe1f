import { secretBox } from '#datasources/secret-box.ts';
import type { IdempotencyPorts } from '#http/idempotency.ts';
import { idempotencyStore } from './repositories.ts';

/** The idempotency records and the secret box that seals their answers (ADR 0088). */
export function idempotencyPorts(): IdempotencyPorts {
  return { store: idempotencyStore(), secretBox: secretBox() };
}
