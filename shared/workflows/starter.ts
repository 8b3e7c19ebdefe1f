import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { deletionStateMachineArn } from '../config/env.ts';
import { UnavailableError } from '../domain/errors.ts';
import type { DeletionWorkflowInput, WorkflowStarter } from '../domain/workflows.ts';

// The port lives in the domain; re-exported for the local host's runner.
export type { DeletionWorkflowInput, WorkflowStarter };

/** Step Functions adapter: `StartExecution` on the state machine named by `DELETION_STATE_MACHINE_ARN`. */
export class StepFunctionsStarter implements WorkflowStarter {
  private readonly client = new SFNClient({});
  constructor(private readonly stateMachineArn: string) {}

  async startDeletion(name: string, input: DeletionWorkflowInput): Promise<void> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name,
          input: JSON.stringify(input),
        }),
      );
    } catch (error) {
      // The same name with other input: that execution exists already (and runs the same operation).
      if (error instanceof ExecutionAlreadyExists) return;
      throw new UnavailableError(
        'workflow_unavailable',
        'The workflow service is unavailable; retry shortly.',
      );
    }
  }
}

let local: WorkflowStarter | undefined;

/** The local host installs its in-process runner here (it runs the same ASL). */
export function installLocalWorkflowStarter(starter: WorkflowStarter | undefined): void {
  local = starter;
}

/** The configured starter: Step Functions when deployed, else the local runner. */
export function workflowStarter(): WorkflowStarter {
  const arn = deletionStateMachineArn();
  if (arn) return new StepFunctionsStarter(arn);
  if (local) return local;
  throw new UnavailableError('workflow_unavailable', 'No workflow runner is configured.');
}
