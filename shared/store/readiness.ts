import type { DependencyProbe } from '#domain/health.ts';
import { DynamoRepository } from './items.ts';
import { keys } from './keys.ts';

/** The catalog store's readiness probe: one GetItem of a key no item ever has (ADR 0131). */
export class DynamoCatalogProbe extends DynamoRepository implements DependencyProbe {
  async ping(): Promise<void> {
    await this.get(keys.readinessProbe());
  }
}
