import { randomBytes } from 'node:crypto';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { config } from '../config/env.ts';
import { UnavailableError } from '../domain/errors.ts';
import type { UsageKey, UsageKeyProvisioner } from '../domain/usage-keys.ts';
import { errorFields, logger } from '../log/logger.ts';
import { captureClient } from '../log/tracer.ts';

/**
 * API Gateway usage keys (only when the stack set USAGE_PLAN_ID); a no-op locally. The client is
 * imported statically (ADR 0100): esbuild keeps every export of a dynamically imported package
 * (81 KB of API Gateway commands instead of the four used); it is built only on the first call.
 */
class ApiGatewayUsageKeys implements UsageKeyProvisioner {
  private planId: string | undefined;

  constructor(private readonly usagePlanName: string) {}

  /** The plan's id, looked up by name once per process. */
  private async usagePlanId(client: APIGatewayClient): Promise<string> {
    if (this.planId) return this.planId;
    let position: string | undefined;
    do {
      const page = await client.send(new GetUsagePlansCommand({ position, limit: 500 }));
      const plan = page.items?.find((p) => p.name === this.usagePlanName);
      if (plan?.id) {
        this.planId = plan.id;
        return plan.id;
      }
      position = page.position;
    } while (position);
    throw new Error(`usage plan ${this.usagePlanName} not found`);
  }

  async create(workspaceId: string): Promise<UsageKey> {
    const client = captureClient(new APIGatewayClient({}));
    try {
      const usagePlanId = await this.usagePlanId(client);
      const value = randomBytes(30).toString('base64url');
      const key = await client.send(
        new CreateApiKeyCommand({ name: `geoplane-ws-${workspaceId}`, enabled: true, value }),
      );
      const id = key.id as string;
      await client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: id, keyType: 'API_KEY' }));
      return { id, value };
    } catch (error) {
      logger.error('usage key provisioning failed', errorFields(error));
      throw new UnavailableError(
        'usage_keys_unavailable',
        'Rate-limit keys could not be provisioned; retry shortly.',
        undefined,
        { cause: error },
      );
    }
  }

  async remove(id: string): Promise<void> {
    await captureClient(new APIGatewayClient({}))
      .send(new DeleteApiKeyCommand({ apiKey: id }))
      .catch((error: unknown) => {
        // A leftover key only costs a slot in the usage plan; the workspace is gone either way.
        logger.warn('usage key not removed', { usage_key_id: id, ...errorFields(error) });
      });
  }
}

const none: UsageKeyProvisioner = { create: async () => undefined, remove: async () => {} };

/** The provisioner of this deployment. */
export function usageKeys(): UsageKeyProvisioner {
  const planName = config().USAGE_PLAN_NAME;
  return planName ? new ApiGatewayUsageKeys(planName) : none;
}
