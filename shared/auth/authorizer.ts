import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { TargetLookup } from '../domain/request-targets.ts';
import { type AuthPorts, authenticate, authenticateWithTarget } from './authenticate.ts';
import { UnauthenticatedError } from './errors.ts';
import { toContext } from './principal.ts';
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
    const { principal, records } = targets
      ? await authenticateWithTarget(event.headers, method, ports, targets, targetOf(event.pathParameters))
      : { principal: await authenticate(event.headers, method, ports), records: undefined };
    return {
      principalId: principal.id,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApi(event.methodArn) }],
      },
      context: { ...toContext(principal), ...targetContext(records, principal.claims) },
      // Usage plans count requests per workspace (or globally) by this key (DESIGN §6).
      ...(principal.usageIdentifierKey ? { usageIdentifierKey: principal.usageIdentifierKey } : {}),
    };
  } catch (error) {
    if (error instanceof UnauthenticatedError) throw new Error('Unauthorized');
    throw error;
  }
}
