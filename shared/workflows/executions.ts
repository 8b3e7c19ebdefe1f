import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient } from '@aws-sdk/client-sfn';
import {
  deletionStateMachineArn,
  harvestStateMachineArn,
  importStateMachineArn,
  tileCacheStateMachineArn,
} from '#config/env.ts';
import { UnavailableError } from '#domain/errors.ts';
import type { WorkflowExecutions } from '#domain/sweeps.ts';
import { awsClient } from '#telemetry/aws-clients.ts';

/**
 * The ARN of an execution of a state machine: `arn:…:stateMachine:<machine>` →
 * `arn:…:execution:<machine>:<name>` (Step Functions' own naming).
 */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/**
 * Step Functions adapter of the sweep's liveness port (ADR 0093): `DescribeExecution` of the
 * execution the item's current attempt or run is named after. An execution that doesn't exist (its
 * start was lost) doesn't run; so doesn't one that succeeded, failed, timed out or was aborted.
 */
export class StepFunctionsExecutions implements WorkflowExecutions {
  private readonly client = awsClient(new SFNClient({}));
  constructor(
    private readonly arns: { deletion?: string; import?: string; harvest?: string; tileCache?: string },
  ) {}

  deletionRunning(name: string): Promise<boolean> {
    return this.running(this.arns.deletion, name);
  }

  importRunning(name: string): Promise<boolean> {
    return this.running(this.arns.import, name);
  }

  harvestRunning(name: string): Promise<boolean> {
    return this.running(this.arns.harvest, name);
  }

  tileCacheJobRunning(name: string): Promise<boolean> {
    return this.running(this.arns.tileCache, name);
  }

  private async running(stateMachineArn: string | undefined, name: string): Promise<boolean> {
    if (!stateMachineArn) {
      throw new UnavailableError('workflow_unavailable', 'The workflow is not configured for this function.');
    }
    try {
      const out = await this.client.send(
        new DescribeExecutionCommand({ executionArn: executionArn(stateMachineArn, name) }),
      );
      return out.status === 'RUNNING' || out.status === 'PENDING_REDRIVE';
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return false;
      throw new UnavailableError(
        'workflow_unavailable',
        'The workflow service is unavailable; retry shortly.',
      );
    }
  }
}

/** The configured liveness check: Step Functions (the deployed state machines' ARNs from the environment). */
export function stepFunctionsExecutions(): WorkflowExecutions {
  return new StepFunctionsExecutions({
    deletion: deletionStateMachineArn(),
    import: importStateMachineArn(),
    harvest: harvestStateMachineArn(),
    tileCache: tileCacheStateMachineArn(),
  });
}
