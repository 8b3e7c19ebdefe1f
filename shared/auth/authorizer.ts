import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type AuthPorts, authenticate } from './authenticate.ts';
import { UnauthenticatedError } from './errors.ts';
import { toContext } from './principal.ts';

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
): Promise<APIGatewayAuthorizerResult> {
  try {
    const principal = await authenticate(event.headers, event.httpMethod ?? methodOf(event.methodArn), ports);
    return {
      principalId: principal.id,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApi(event.methodArn) }],
      },
      context: toContext(principal),
      // Usage plans count requests per workspace (or globally) by this key (DESIGN §6).
      ...(principal.usageIdentifierKey ? { usageIdentifierKey: principal.usageIdentifierKey } : {}),
    };
  } catch (error) {
    if (error instanceof UnauthenticatedError) throw new Error('Unauthorized');
    throw error;
  }
}
