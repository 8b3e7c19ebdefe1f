/*
 * API Gateway's client as a sidecar (ADR 0100): built as its own module beside the bundles that
 * provision usage keys (`infra/bundling.ts`) and imported by `usage-keys.ts` on the first key it
 * makes, lists or deletes — a workspace's first key of a pool slot, and the sweep. Third-party
 * code only.
 */
export {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
