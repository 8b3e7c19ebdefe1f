import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { type GatewayError, gatewayErrorBody, gatewayErrors } from '#http/gateway-responses.ts';
import { securityHeaders } from '#http/responses.ts';

/** API Gateway's request id, substituted when the gateway renders the template. */
const requestIdVariable = '$context.requestId';

/** The mapping template of a gateway error: the standard error body (DESIGN §5). */
export function gatewayResponseTemplate(error: GatewayError): string {
  for (const text of [error.message, error.detail, error.reason]) {
    // `$` and `#` start VTL references and directives; the texts must stay literal.
    if (/[$#]/.test(text)) throw new Error(`gateway error ${error.type}: "${text}" would be read as VTL`);
  }
  return JSON.stringify(gatewayErrorBody(error, requestIdVariable));
}

/**
 * Response headers of a gateway error: the API's security headers, JSON content type and, for
 * throttling, Retry-After. Values are static (quoted). Headers whose value holds a single quote (the
 * CSP) can't be written as a static value and are left to the JSON body never being rendered.
 * The error's status and texts come from the one error table (`shared/http/errors.ts`).
 */
export function gatewayResponseHeaders(error: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const [name, value] of Object.entries(securityHeaders))
    if (!value.includes("'")) headers[name] = value;
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value}'`]));
}

/** Adds a gateway response for every entry of `gatewayErrors`, so API Gateway's own errors share the body. */
export function addGatewayResponses(api: RestApi): void {
  for (const [id, error] of Object.entries(gatewayErrors)) {
    api.addGatewayResponse(`GatewayResponse-${id}`, {
      type: ResponseType.of(error.type),
      statusCode: String(error.status),
      responseHeaders: gatewayResponseHeaders(error),
      templates: { 'application/json': gatewayResponseTemplate(error) },
    });
  }
}
