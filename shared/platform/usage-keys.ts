import { randomBytes } from 'node:crypto';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { awsResource } from '#config/env.ts';
import { UnavailableError } from '#domain/errors.ts';
import {
  type FoundKey,
  USAGE_KEY_TAG,
  type UsageKey,
  type UsageKeyInventory,
  type UsageKeyMaker,
} from '#domain/usage-keys.ts';
import { errorFields, logger } from '#log/logger.ts';
import { captureClient } from '#telemetry/tracer.ts';

/** The name of the key made for a slot of the pool: `<plan>-slot-<n>`. */
export function slotKeyName(usagePlanName: string, slot: number): string {
  return `${usagePlanName}-slot-${slot}`;
}

/**
 * API Gateway's API keys (the stack sets USAGE_PLAN_NAME). The client is imported statically (ADR
 * 0100): esbuild keeps every export of a dynamically imported package; it is built on first use.
 */
export class ApiGatewayUsageKeys implements UsageKeyMaker, UsageKeyInventory {
  private planId: string | undefined;
  private client: APIGatewayClient | undefined;

  constructor(private readonly usagePlanName: string) {}

  private api(): APIGatewayClient {
    this.client ??= captureClient(new APIGatewayClient({}));
    return this.client;
  }

  /** The plan's id, looked up by name once per process (its id would make the functions depend on the stage: a cycle). */
  private async usagePlanId(): Promise<string> {
    if (this.planId) return this.planId;
    let position: string | undefined;
    do {
      const page = await this.api().send(new GetUsagePlansCommand({ position, limit: 500 }));
      const plan = page.items?.find((p) => p.name === this.usagePlanName);
      if (plan?.id) {
        this.planId = plan.id;
        return plan.id;
      }
      position = page.position;
    } while (position);
    throw new Error(`usage plan ${this.usagePlanName} not found`);
  }

  async make(slot: number): Promise<UsageKey> {
    let made: UsageKey | undefined;
    try {
      const usagePlanId = await this.usagePlanId();
      const value = randomBytes(30).toString('base64url');
      const key = await this.api().send(
        new CreateApiKeyCommand({
          name: slotKeyName(this.usagePlanName, slot),
          description:
            'GeoPlane usage key (rate limits of the workspaces of one pool slot); not a credential.',
          enabled: true,
          value,
          tags: { [USAGE_KEY_TAG]: this.usagePlanName },
        }),
      );
      made = { id: key.id as string, value };
      await this.api().send(
        new CreateUsagePlanKeyCommand({ usagePlanId, keyId: made.id, keyType: 'API_KEY' }),
      );
      return made;
    } catch (error) {
      logger.error('usage key provisioning failed', { slot, ...errorFields(error) });
      // A key made but not in the plan meters nothing: it goes again (else the sweep deletes it).
      if (made) await this.discard(made.id).catch(() => undefined);
      throw new UnavailableError(
        'usage_keys_unavailable',
        'Rate-limit keys could not be provisioned; retry shortly.',
        undefined,
        { cause: error },
      );
    }
  }

  async discard(id: string): Promise<void> {
    try {
      await this.api().send(new DeleteApiKeyCommand({ apiKey: id }));
    } catch (error) {
      if ((error as { name?: string }).name === 'NotFoundException') return;
      logger.warn('usage key not deleted; the sweep deletes it later', {
        usage_key_id: id,
        ...errorFields(error),
      });
      throw error;
    }
  }

  /** Every key this deployment made (names start with the plan's, and the tag says so), without values. */
  async list(): Promise<FoundKey[]> {
    const found: FoundKey[] = [];
    let position: string | undefined;
    do {
      const page = await this.api().send(
        new GetApiKeysCommand({ position, limit: 500, nameQuery: this.usagePlanName, includeValues: false }),
      );
      for (const key of page.items ?? []) {
        if (key.id && key.tags?.[USAGE_KEY_TAG] === this.usagePlanName)
          found.push({ id: key.id, createdAt: key.createdDate ?? new Date(0) });
      }
      position = page.position;
    } while (position);
    return found;
  }
}

/**
 * Where there are no usage plans (the local host): a slot's key is only its value, which the local
 * gateway meters by (it decides as API Gateway would, by `usageIdentifierKey` alone).
 */
export const localUsageKeys: UsageKeyMaker = {
  make: async (slot) => ({ id: `local-slot-${slot}`, value: `geoplane-local-usage-key-${slot}` }),
  discard: async () => {},
};

/** The key maker of this deployment. */
export function usageKeyMaker(): UsageKeyMaker {
  const planName = awsResource('USAGE_PLAN_NAME');
  return planName ? new ApiGatewayUsageKeys(planName) : localUsageKeys;
}

/** The keys the sweep looks through: API Gateway's, or none where there are no usage plans. */
export function usageKeyInventory(): UsageKeyInventory {
  const planName = awsResource('USAGE_PLAN_NAME');
  return planName ? new ApiGatewayUsageKeys(planName) : { list: async () => [], discard: async () => {} };
}
