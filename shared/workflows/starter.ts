import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { UnavailableError } from '../domain/errors.ts';

/** Input of the deletion workflow. */
export interface DeletionWorkflowInput {
  operation_id: string;
  /** The operation's attempt this execution runs; an execution of an older attempt stops. */
  attempt: number;
}

/**
 * Port: starts a workflow execution. `name` is the execution name — the operation id (plus the
 * attempt for a retry), so a start repeated after a lost answer can't run the work twice.
 * The API handlers don't know whether Step Functions or the in-process runner executes it.
 */
export interface WorkflowStarter {
  startDeletion(name: string, input: DeletionWorkflowInput): Promise<void>;
}

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
  const arn = process.env.DELETION_STATE_MACHINE_ARN;
  if (arn) return new StepFunctionsStarter(arn);
  if (local) return local;
  throw new UnavailableError('workflow_unavailable', 'No workflow runner is configured.');
}
