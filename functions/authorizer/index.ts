import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authorizeRequest } from '../../shared/auth/authorizer.ts';
import { authPorts } from '../../shared/wiring/access.ts';
import { targetLookup } from '../../shared/wiring/repositories.ts';

/** The REQUEST authorizer of every non-public route (its logic: `shared/auth/authorizer.ts`). */
export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  return authorizeRequest(event, authPorts(), targetLookup());
}
