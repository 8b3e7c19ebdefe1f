import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setEnvironment } from '#config/env.ts';
import type { CatalogEventBus } from '#domain/catalog-events.ts';
import { installCatalogEventBus } from '#platform/event-bus.ts';
import { documentClient } from '#store/client.ts';
import type { WorkflowStarters } from '#workflows/starter.ts';
import { installLocalWorkflowStarter } from './workflows.ts';

/** What the local host puts in place of AWS (ARCHITECTURE §6). */
export interface LocalAdapters {
  /**
   * The environment of local mode: DynamoDB Local's endpoint, the AES key of the secret box, the
   * local issuer, the upload and tile cache directories, … (and none of the AWS resources, so
   * `awsResource` in `shared/config/env.ts` picks the local adapter of every port).
   */
  env: Readonly<Record<string, string>>;
  /** The in-process runner of the state machines' ASL, in place of Step Functions. */
  workflows: WorkflowStarters;
  /** The local event feed, in place of EventBridge. */
  eventBus: CatalogEventBus;
  /** IAM's least privilege, emulated on the process's document client. */
  checkDataAccess: (client: DynamoDBDocumentClient) => void;
}

/**
 * THE switch of a process to local mode (issue #28): the environment, the data access check and
 * the in-process adapters, in one call of the local host. Everything else decides through it.
 */
export function useLocalAdapters(adapters: LocalAdapters): void {
  setEnvironment(adapters.env);
  adapters.checkDataAccess(documentClient());
  installLocalWorkflowStarter(adapters.workflows);
  installCatalogEventBus(adapters.eventBus);
}

/** The local host stopping: no workflow starts on its closed runner (the environment stays). */
export function stopLocalWorkflows(): void {
  installLocalWorkflowStarter(undefined);
}
