import { CustomResource, Duration } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { DataAction } from '#api/operation.ts';
import type { BootstrapAdmin } from '#domain/bootstrap-admins.ts';
import { ApiFunction } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';

/** Entry point of the custom resource's function, relative to the repository root. */
export const bootstrapAdminsEntry = 'functions/bootstrap/bootstrap-admins.ts';

/**
 * The table access of the reconciliation: list the global mappings (Query), create a mapping and its
 * uniqueness marker (PutItem, in one transaction), delete them (DeleteItem). super_admin is a
 * built-in role, so no role item is read or counted (no GetItem, no UpdateItem).
 */
// GetItem: the global scope's claim mapping summary (ADR 0103), read before it is put back.
export const bootstrapAdminsData: readonly DataAction[] = ['GetItem', 'Query', 'PutItem', 'DeleteItem'];

export interface BootstrapAdminsProps {
  /** cdk.json `bootstrapAdmins`: claims that become global super_admin mappings. */
  admins: readonly BootstrapAdmin[];
  table: CatalogTable;
  bundles: FunctionBundles;
  environment: Record<string, string>;
  logRetention: RetentionDays;
}

/**
 * The first administrators (ADR 0089): a custom resource backed by its own function (no Provider
 * framework: one function, one role, no framework Lambda) that keeps the global super_admin claim
 * mappings of `bootstrapAdmins` in step with the context, on every deployment. Always present, even
 * with an empty list, so that emptying the list removes what it made.
 */
export class BootstrapAdmins extends Construct {
  readonly function: ApiFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: BootstrapAdminsProps) {
    super(scope, id);
    this.function = new ApiFunction(this, 'Handler', {
      entry: bootstrapAdminsEntry,
      bundles: props.bundles,
      description: 'bootstrapAdmins: keeps the global super_admin claim mappings of the first administrators',
      table: props.table,
      data: bootstrapAdminsData,
      environment: props.environment,
      logRetention: props.logRetention,
      timeout: Duration.seconds(60),
      memorySize: 256,
    });
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: this.function.function.functionArn,
      resourceType: 'Custom::GeoPlaneBootstrapAdmins',
      properties: {
        Admins: props.admins.map((a) => ({ claim_name: a.claim_name, claim_value: a.claim_value })),
      },
    });
  }
}
