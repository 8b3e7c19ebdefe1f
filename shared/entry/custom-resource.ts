import type {
  CloudFormationCustomResourceEvent,
  CloudFormationCustomResourceResponse,
  Context,
} from 'aws-lambda';
import { errorFields, logger } from '#log/logger.ts';

/** What a custom resource's work returns: its physical id and the attributes `Fn::GetAtt` reads. */
export interface CustomResourceResult {
  physicalResourceId: string;
  data?: Record<string, string | number>;
}

/** CloudFormation reads at most 4 KB of response; a failure's reason is cut well below that. */
const MAX_REASON = 1000;

/** Sends the response to CloudFormation's presigned URL (no Content-Type: the URL is signed without one). */
async function respond(url: string, response: CloudFormationCustomResourceResponse): Promise<void> {
  const body = Buffer.from(JSON.stringify(response), 'utf8');
  const answer = await fetch(url, { method: 'PUT', body, signal: AbortSignal.timeout(10_000) });
  if (!answer.ok) throw new Error(`CloudFormation refused the response: HTTP ${answer.status}`);
}

/**
 * A Lambda-backed CloudFormation custom resource (ADR 0089) without the Provider framework: runs
 * `work` and always answers CloudFormation (SUCCESS, or FAILED with the error's message), so a
 * failure fails the deployment at once instead of leaving it waiting for an hour.
 */
export function makeCustomResourceHandler(
  work: (event: CloudFormationCustomResourceEvent) => Promise<CustomResourceResult>,
): (event: CloudFormationCustomResourceEvent, context?: Pick<Context, 'logStreamName'>) => Promise<void> {
  return async (event, context) => {
    const base = {
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    };
    // A failed Create still names a physical id: the rollback's Delete carries it.
    const fallbackId =
      event.RequestType === 'Create'
        ? `${event.LogicalResourceId}-${event.RequestId}`
        : event.PhysicalResourceId;
    let response: CloudFormationCustomResourceResponse;
    try {
      const result = await work(event);
      response = {
        ...base,
        Status: 'SUCCESS',
        PhysicalResourceId: result.physicalResourceId,
        ...(result.data ? { Data: result.data } : {}),
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      logger.error('custom resource failed', { request_type: event.RequestType, ...errorFields(error) });
      const where = context?.logStreamName ? ` (log stream ${context.logStreamName})` : '';
      response = {
        ...base,
        Status: 'FAILED',
        Reason: `${message}${where}`.slice(0, MAX_REASON),
        PhysicalResourceId: fallbackId,
      };
    }
    await respond(event.ResponseURL, response);
  };
}
