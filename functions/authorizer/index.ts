import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authorizeRequest } from '#auth/authorizer.ts';
import { authPorts } from '#wiring/access.ts';
import { targetLookup } from '#wiring/repositories.ts';

/** The REQUEST authorizer of every non-public route (its logic: `shared/auth/authorizer.ts`). */
export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  return authorizeRequest(event, authPorts(), targetLookup());
}
