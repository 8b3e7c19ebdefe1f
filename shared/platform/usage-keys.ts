import { randomBytes } from 'node:crypto';
import type { APIGatewayClient } from '@aws-sdk/client-api-gateway';
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
import { awsClient } from '#telemetry/aws-clients.ts';

/** The name of the key made for a slot of the pool: `<plan>-slot-<n>`. */
export function slotKeyName(usagePlanName: string, slot: number): string {
  return `${usagePlanName}-slot-${slot}`;
}

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

type ApiGatewaySdk = typeof import('./api-gateway-sidecar.ts');
let loading: Promise<ApiGatewaySdk> | undefined;

/**
 * API Gateway's client, loaded on first use (ADR 0100): the sidecar beside the bundle, or the
 * package from source. Only the first workspace of a pool slot and the sweep need it, so
 * createWorkspace doesn't carry or evaluate it on every cold start.
 */
function apiGatewaySdk(): Promise<ApiGatewaySdk> {
  loading ??= (
    (typeof GEOPLANE_BUNDLE !== 'undefined'
      ? import(new URL('./api-gateway.sidecar.mjs', import.meta.url).href)
      : import('./api-gateway-sidecar.ts')) as Promise<ApiGatewaySdk>
  ).catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** API Gateway's API keys (the stack sets USAGE_PLAN_NAME); the client is built on first use. */
export class ApiGatewayUsageKeys implements UsageKeyMaker, UsageKeyInventory {
  private planId: string | undefined;
  private client: APIGatewayClient | undefined;

  constructor(private readonly usagePlanName: string) {}

  private async api(): Promise<{ client: APIGatewayClient; sdk: ApiGatewaySdk }> {
    const loaded = await apiGatewaySdk();
    this.client ??= awsClient(new loaded.APIGatewayClient({}));
    return { client: this.client, sdk: loaded };
  }

  /** The plan's id, looked up by name once per process (its id would make the functions depend on the stage: a cycle). */
  private async usagePlanId(): Promise<string> {
    if (this.planId) return this.planId;
    let position: string | undefined;
    const { client, sdk } = await this.api();
    do {
      const page = await client.send(new sdk.GetUsagePlansCommand({ position, limit: 500 }));
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
      const { client, sdk } = await this.api();
      const value = randomBytes(30).toString('base64url');
      const key = await client.send(
        new sdk.CreateApiKeyCommand({
          name: slotKeyName(this.usagePlanName, slot),
          description:
            'GeoPlane usage key (rate limits of the workspaces of one pool slot); not a credential.',
          enabled: true,
          value,
          tags: { [USAGE_KEY_TAG]: this.usagePlanName },
        }),
      );
      made = { id: key.id as string, value };
      await client.send(
        new sdk.CreateUsagePlanKeyCommand({ usagePlanId, keyId: made.id, keyType: 'API_KEY' }),
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
      const { client, sdk } = await this.api();
      await client.send(new sdk.DeleteApiKeyCommand({ apiKey: id }));
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
    const { client, sdk } = await this.api();
    do {
      const page = await client.send(
        new sdk.GetApiKeysCommand({
          position,
          limit: 500,
          nameQuery: this.usagePlanName,
          includeValues: false,
        }),
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
