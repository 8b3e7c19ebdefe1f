import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { isDataPlaneResource } from '#api/data-routes.ts';
import { config } from '#config/env.ts';
import type { TargetLookup, TargetRecords } from '#domain/request-targets.ts';
import { type AuthPorts, authenticate, authenticateWithTarget, type RequestTarget } from './authenticate.ts';
import { UnauthenticatedError } from './errors.ts';
import { ANONYMOUS_PRINCIPAL, carriesCredential, toContext } from './principal.ts';
import { targetContext, targetOf } from './request-target.ts';

/** `arn:aws:execute-api:region:account:apiId/stage/*`: the policy covers the whole API. */
function wholeApi(methodArn: string): string {
  const [arn, apiId, stage] = methodArn.split('/');
  return `${arn}/${apiId}/${stage}/*`;
}

/** The HTTP method inside `arn:…:apiId/stage/METHOD/path`. */
function methodOf(methodArn: string): string {
  return methodArn.split('/')[2] ?? 'GET';
}

/**
 * The usage key a request is metered on (ADR 0111; DESIGN §6): a request in a workspace on that
 * workspace's key, whatever the credential (API key, token or session); any other request on the
 * global key. A workspace the lookup did not find (it does not exist, or was made before usage
 * keys) is metered globally: its request is answered 404 by the handler or served as before.
 */
export function usageKeyOf(target: RequestTarget, records: TargetRecords | undefined): string | undefined {
  const workspaceKey = target.workspace === undefined ? undefined : records?.workspace?.workspace?.usage_key;
  return workspaceKey ?? config().GLOBAL_USAGE_KEY;
}

/**
 * The REQUEST authorizer's answer. Caching is off (TTL 0), so the policy may cover the whole API:
 * it is never reused for another request. Rejections throw `Unauthorized`, which API Gateway
 * answers with 401; any other failure (the store is down) becomes AUTHORIZER_FAILURE, reshaped to 503.
 */
export async function authorizeRequest(
  event: APIGatewayRequestAuthorizerEvent,
  ports: AuthPorts,
  targets?: TargetLookup,
): Promise<APIGatewayAuthorizerResult> {
  try {
    const method = event.httpMethod ?? methodOf(event.methodArn);
    // The path's workspace and service are read with the credential and handed on (ADR 0099).
    const target = targetOf(event.pathParameters);
    // The data plane serves public layers to callers with no credential at all (ADR 0120); a
    // credential that is sent is checked as everywhere, and a bad one is 401, never anonymous.
    if (isDataPlaneResource(event.resource) && !carriesCredential(event.headers)) {
      const records =
        targets && target.workspace !== undefined
          ? await targets.lookUp(target).catch(() => undefined)
          : undefined;
      const usageIdentifierKey = usageKeyOf(target, records);
      return {
        principalId: ANONYMOUS_PRINCIPAL,
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApi(event.methodArn) }],
        },
        context: { anonymous: 'true', ...targetContext(records, undefined) },
        ...(usageIdentifierKey ? { usageIdentifierKey } : {}),
      };
    }
    const { principal, records } = targets
      ? await authenticateWithTarget(event.headers, method, ports, targets, target)
      : { principal: await authenticate(event.headers, method, ports), records: undefined };
    const usageIdentifierKey = usageKeyOf(target, records);
    return {
      principalId: principal.id,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApi(event.methodArn) }],
      },
      context: { ...toContext(principal), ...targetContext(records, principal.claims) },
      // Usage plans count requests per workspace (or globally) by this key (DESIGN §6).
      ...(usageIdentifierKey ? { usageIdentifierKey } : {}),
    };
  } catch (error) {
    if (error instanceof UnauthenticatedError) throw new Error('Unauthorized');
    throw error;
  }
}
