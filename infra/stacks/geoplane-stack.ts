import { App, CfnOutput, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import type { Operation } from '#api/operation.ts';
import { routes as routeTable } from '#api/routes.ts';
import { tableDefinition } from '#store/table.ts';
import { functionEnvironment, repositoryRoot } from '../constructs/api-function.ts';
import { BootstrapAdmins, bootstrapAdminsEntry } from '../constructs/bootstrap-admins.ts';
import { CatalogEvents, catalogEventsEntry } from '../constructs/catalog-events.ts';
import { CatalogTable } from '../constructs/catalog-table.ts';
import { ConsoleSite } from '../constructs/console-site.ts';
import { DataPlane, dataPlaneEntries } from '../constructs/data-plane.ts';
import { DeletionWorkflow, deletionTaskEntries } from '../constructs/deletion-workflow.ts';
import { FunctionBundles } from '../constructs/function-bundles.ts';
import { HarvestWorkflow } from '../constructs/harvest-workflow.ts';
import { ImportUploads, importEnvironment } from '../constructs/import-uploads.ts';
import { ImportWorkflow, importTaskEntries } from '../constructs/import-workflow.ts';
import { jobLoopTaskEntries } from '../constructs/job-loop-workflow.ts';
import { ManagementApi, managementApiEntries } from '../constructs/management-api.ts';
import { OperationsAlarms } from '../constructs/operations-alarms.ts';
import { type StageConfig, stageConfigOf } from '../constructs/stage-config.ts';
import { Sweeps, sweepEntry } from '../constructs/sweeps.ts';
import { TileCache } from '../constructs/tile-cache.ts';
import { TileCacheWorkflow } from '../constructs/tile-cache-workflow.ts';
import { interfaceServicesOf, VpcEndpoints, VpcPlacement } from '../constructs/vpc-placement.ts';
import { harvestWorkflow } from '../workflows/harvest-workflow.ts';
import { tileCacheWorkflow } from '../workflows/tile-cache-workflow.ts';

/** Every Lambda entry point of the app for a route table: one esbuild run bundles them all (ADR 0017). */
export function appEntries(routes: readonly Operation[]): string[] {
  return [
    ...new Set([
      ...managementApiEntries(routes),
      ...dataPlaneEntries,
      ...deletionTaskEntries,
      ...importTaskEntries,
      ...jobLoopTaskEntries(harvestWorkflow),
      ...jobLoopTaskEntries(tileCacheWorkflow),
      bootstrapAdminsEntry,
      sweepEntry,
      catalogEventsEntry,
    ]),
  ];
}

export interface GeoPlaneStackProps extends StackProps {
  config: StageConfig;
  /** The route table; defaults to THE route table. */
  routes?: readonly Operation[];
  /**
   * The built console (console/dist, after `ensureConsoleBuilt()`) to deploy with the API when
   * cdk.json `consoleEnabled` is on (issue #14). infra/app.ts passes it; without it the stack has
   * no console, so a stack made without a console build (most stack tests) needs none.
   */
  consoleDist?: string;
}

/**
 * GeoPlane in one stack to deploy: the catalog table, the deletion and import workflows, the import
 * upload bucket, the management API (one function per route), the data plane (one function for
 * every data route, behind CloudFront; ADR 0122) and the first administrators (`bootstrapAdmins`,
 * ADR 0089). The operations' functions and methods are in nested stacks by area,
 * each template under 400 resources (ADR 0077). Environment-agnostic, so `cdk synth` needs no
 * credentials.
 */
export class GeoPlaneStack extends Stack {
  readonly table: CatalogTable;
  readonly deletionWorkflow: DeletionWorkflow;
  readonly importUploads: ImportUploads;
  readonly importWorkflow: ImportWorkflow;
  readonly harvestWorkflow: HarvestWorkflow;
  /** The persistent tile cache's bucket (ADR 0139). */
  readonly tileCache: TileCache;
  /** Seeds, reseeds and truncates tile caches (ADR 0139). */
  readonly tileCacheWorkflow: TileCacheWorkflow;
  readonly api: ManagementApi;
  readonly bootstrapAdmins: BootstrapAdmins;
  readonly catalogEvents: CatalogEvents;
  readonly sweeps: Sweeps;
  readonly alarms: OperationsAlarms;
  /** The web console and its distribution, when deployed (issue #14). */
  readonly console: ConsoleSite | undefined;
  /** The data plane: its function, methods and CloudFront behaviour (DESIGN §8a, ADR 0122). */
  readonly dataPlane: DataPlane;
  /** Where the functions that open PostgreSQL connections run, with cdk.json `vpc` (ADR 0112). */
  readonly vpc: VpcPlacement | undefined;
  /** The endpoints of `vpc.endpoints` (ADR 0112), with cdk.json `vpc`. */
  readonly vpcEndpoints: VpcEndpoints | undefined;

  constructor(scope: Construct, id: string, props: GeoPlaneStackProps) {
    super(scope, id, props);
    const { config } = props;
    const routes = props.routes ?? routeTable;
    this.table = new CatalogTable(this, 'Catalog');
    // Every function of the app comes out of one esbuild run (ADR 0017).
    const bundles = new FunctionBundles(repositoryRoot, appEntries(routes));
    const environment = functionEnvironment(config, this.table);
    const logRetention = config.logRetentionDays as RetentionDays;
    // The operator's VPC (ADR 0112): only the functions that open PostgreSQL connections go in it.
    this.vpc = config.vpc ? new VpcPlacement(config.vpc) : undefined;
    this.vpcEndpoints = this.vpc
      ? new VpcEndpoints(this, 'VpcEndpoints', {
          placement: this.vpc,
          interfaceServices: interfaceServicesOf({ importDatabase: Boolean(config.importDatabase) }),
        })
      : undefined;
    const vpc = this.vpc ? { vpc: this.vpc } : {};
    // Before the API: the routes that start it get its ARN (the workflow depends on no API function).
    this.deletionWorkflow = new DeletionWorkflow(this, 'DeletionWorkflow', {
      table: this.table,
      bundles,
      environment,
      logRetention,
    });
    // Imports (ADR 0086): the upload bucket, then the workflow (rollback starts the deletion workflow).
    this.importUploads = new ImportUploads(this, 'ImportUploads', { config });
    const imports = importEnvironment(config, this.importUploads.bucket.bucketName);
    this.importWorkflow = new ImportWorkflow(this, 'ImportWorkflow', {
      config,
      table: this.table,
      bundles,
      environment,
      importEnvironment: imports,
      uploads: this.importUploads,
      deletionStateMachine: this.deletionWorkflow.stateMachine,
      logRetention,
      ...vpc,
    });
    // Mosaic harvest jobs (ADR 0136): chunks of a root's files, read from the stage's mosaic buckets.
    this.harvestWorkflow = new HarvestWorkflow(this, 'HarvestWorkflow', {
      table: this.table,
      bundles,
      environment,
      logRetention,
      mosaicBuckets: (config.mosaicBuckets ?? '')
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean),
    });
    // The persistent tile cache (ADR 0139): its bucket, and the jobs that fill and empty it, whose
    // step renders tiles from PostGIS as the data plane does (in the VPC with cdk.json `vpc`).
    this.tileCache = new TileCache(this, 'TileCache');
    this.tileCacheWorkflow = new TileCacheWorkflow(this, 'TileCacheWorkflow', {
      table: this.table,
      bundles,
      environment,
      logRetention,
      tileCache: this.tileCache,
      ...vpc,
    });
    this.api = new ManagementApi(this, 'Management', {
      config,
      table: this.table,
      routes,
      bundles,
      workflows: {
        deletion: this.deletionWorkflow.stateMachine,
        import: this.importWorkflow.stateMachine,
        harvest: this.harvestWorkflow.stateMachine,
        tileCache: this.tileCacheWorkflow.stateMachine,
      },
      imports: {
        uploadBucketName: this.importUploads.bucket.bucketName,
        environment: imports,
        ...(config.importDatabase ? { databaseSecretArn: config.importDatabase.secretArn } : {}),
      },
      // The integrity check counts the stored tiles against each workspace's usage (ADR 0138).
      tileCacheBucketName: this.tileCache.bucket.bucketName,
      ...vpc,
    });
    // The connection-secrets key lives with the API (its construct path is its identity, ADR 0077).
    this.importWorkflow.useSecretsKey(this.api.secretsKey);
    this.tileCacheWorkflow.useSecretsKey(this.api.secretsKey);
    // The first administrators (ADR 0089): cdk.json `bootstrapAdmins` as global super_admin mappings.
    this.bootstrapAdmins = new BootstrapAdmins(this, 'BootstrapAdmins', {
      admins: config.bootstrapAdmins,
      table: this.table,
      bundles,
      environment,
      logRetention,
    });
    // The scheduled sweep of stuck deletions, imports, harvest and tile cache jobs (ADR 0093).
    this.sweeps = new Sweeps(this, 'Sweeps', {
      table: this.table,
      bundles,
      environment,
      logRetention,
      deletionStateMachine: this.deletionWorkflow.stateMachine,
      importStateMachine: this.importWorkflow.stateMachine,
      harvestStateMachine: this.harvestWorkflow.stateMachine,
      tileCacheStateMachine: this.tileCacheWorkflow.stateMachine,
      usageKeys: { usagePlanName: this.api.usagePlanName, config },
      tileCache: {
        bucketName: this.tileCache.bucket.bucketName,
        bucketRef: this.getLogicalId(this.tileCache.bucket.node.defaultChild as never),
      },
    });

    // Catalog-change events (ADR 0094): the table's stream → EventBridge, no dual writes.
    this.catalogEvents = new CatalogEvents(this, 'CatalogEvents', {
      table: this.table,
      bundles,
      environment,
      logRetention,
    });

    new CfnOutput(this, 'CatalogEventBusName', {
      description: 'The EventBridge bus of the catalog-change events (source geoplane); add rules to it',
      value: this.catalogEvents.bus.eventBusName,
    });
    new CfnOutput(this, 'ApiUrl', {
      description:
        'Base URL of the management API, https://<id>.execute-api.<region>.amazonaws.com/<stage>/api/v1 (append /workspaces, /openapi.json, …)',
      value: this.api.baseUrl,
    });
    // The web console (issue #14): one CloudFront origin for the console and the API.
    this.console =
      config.consoleEnabled && props.consoleDist
        ? new ConsoleSite(this, 'Console', {
            config,
            api: this.api.api,
            dist: props.consoleDist,
            // The console's import uploads POST straight to the upload bucket (its CORS allows them).
            uploadOrigin: `https://${this.importUploads.bucket.bucketRegionalDomainName}`,
          })
        : undefined;
    if (this.console) {
      new CfnOutput(this, 'ConsoleUrl', {
        description:
          'The web console, https://<distribution>/console/; the API is at /api/v1 of the same origin',
        value: this.console.url,
      });
      new CfnOutput(this, 'ConsoleRedirectUri', {
        description:
          'The OIDC redirect URI the console signs in with: register it with the identity provider',
        value: config.oidcRedirectUri ?? `${this.console.url}callback`,
      });
    }
    // The data plane (ADR 0122): on the console's distribution when there is one, else on its own.
    this.dataPlane = new DataPlane(this, 'DataPlane', {
      config,
      table: this.table,
      bundles,
      environment,
      api: this.api.api,
      authorizer: this.api.authorizer,
      secretsKey: this.api.secretsKey,
      tileCacheBucketName: this.tileCache.bucket.bucketName,
      ...(this.console ? { console: this.console } : {}),
      ...(lastOf(this.api.stacks) ? { after: lastOf(this.api.stacks) } : {}),
      ...vpc,
    });
    new CfnOutput(this, 'DataPlaneUrl', {
      description:
        "Base URL of each workspace's OGC API (Features and Tiles), https://<distribution>/workspaces/{workspace}/ogc (the workspace by id or name)",
      value: this.dataPlane.url,
    });
    new CfnOutput(this, 'TableName', {
      description: 'The catalog table (geoplane bootstrap --stack reads it)',
      value: this.table.table.tableName,
    });
    new CfnOutput(this, 'ImportUploadBucket', {
      description: 'The bucket imports upload files into (presigned POSTs)',
      value: this.importUploads.bucket.bucketName,
    });

    // The operator's alarms, notifying one SNS topic (ADR 0091); cdk.json `alarmEmails` subscribe to it.
    this.alarms = new OperationsAlarms(this, 'Alarms', {
      api: this.api.api,
      authorizer: this.api.authorizerFunction.function,
      stateMachines: {
        deletion: this.deletionWorkflow.stateMachine,
        import: this.importWorkflow.stateMachine,
        harvest: this.harvestWorkflow.stateMachine,
        'tile-cache': this.tileCacheWorkflow.stateMachine,
      },
      table: this.table.table,
      tableIndexes: tableDefinition.globalSecondaryIndexes.map((gsi) => gsi.indexName),
      deadLetterQueues: [],
      backgroundFunctions: {
        sweep: this.sweeps.function.function,
        'catalog-events': this.catalogEvents.function.function,
      },
      // The functions no client reports a throttle of (ADR 0115); the API's show as its 5xx rate.
      throttleWatchedFunctions: {
        authorizer: this.api.authorizerFunction.function,
        ...Object.fromEntries(
          [...this.deletionWorkflow.functions].map(([task, fn]) => [`deletion-${task}`, fn.function]),
        ),
        ...Object.fromEntries(
          [...this.importWorkflow.functions].map(([task, fn]) => [`import-${task}`, fn.function]),
        ),
        ...Object.fromEntries(
          [...this.harvestWorkflow.functions].map(([task, fn]) => [`harvest-${task}`, fn.function]),
        ),
        sweep: this.sweeps.function.function,
        'catalog-events': this.catalogEvents.function.function,
      },
      streamConsumers: { 'catalog-events': this.catalogEvents.function.function },
      emails: config.alarmEmails,
    });
    // Catalog events set aside after every retry (ADR 0094).
    this.alarms.watchDeadLetterQueue(this.catalogEvents.deadLetterQueue, 'catalog-events');
    new CfnOutput(this, 'AlarmTopicArn', {
      description:
        'The SNS topic the alarms notify (subscribe more endpoints to it; alarmEmails are subscribed)',
      value: this.alarms.topic.topicArn,
    });
  }
}

/** The last value of a map (in insertion order). */
const lastOf = <T>(map: ReadonlyMap<string, T>): T | undefined => [...map.values()].at(-1);

/**
 * The stack's name (ADR 0114): `GeoPlane` without a `stage` (as deployed so far, so an existing
 * stack is never replaced), `GeoPlane-<stage>` with one. Explicit resource names derive from it.
 */
export function stackNameOf(config: Pick<StageConfig, 'stage'>): string {
  return config.stage ? `GeoPlane-${config.stage}` : 'GeoPlane';
}

export interface GeoPlaneAppOptions {
  /** Context for the app; the CDK CLI passes `cdk.json` context through the environment instead. */
  context?: Record<string, unknown>;
  /** Bundle the functions with esbuild (default true). Tests turn it off: synth then takes about a second. */
  bundling?: boolean;
  /** CDK's built-in CloudFormation validation (default true; it costs 6–8 s, so tests turn it off). */
  builtinCloudFormationValidation?: boolean;
  /** The built console to deploy (see {@link GeoPlaneStackProps.consoleDist}); none by default. */
  consoleDist?: string;
}

/**
 * The CDK app: the GeoPlane stack, with the cdk-nag AwsSolutions checks registered as a validation
 * plugin (cdk-nag 3), so an unacknowledged finding of level error fails the synth.
 */
export function createGeoPlaneApp(options: GeoPlaneAppOptions = {}): { app: App; stack: GeoPlaneStack } {
  const context = {
    ...options.context,
    ...(options.bundling === false ? { 'aws:cdk:bundling-stacks': [] } : {}),
  };
  const app = new App({
    context,
    ...(options.builtinCloudFormationValidation === undefined
      ? {}
      : { builtinCloudFormationValidation: options.builtinCloudFormationValidation }),
  });
  const config = stageConfigOf(app.node);
  const stack = new GeoPlaneStack(app, stackNameOf(config), {
    config,
    description: 'GeoPlane management API (control plane): catalog table, REST API and its functions',
    ...(options.consoleDist ? { consoleDist: options.consoleDist } : {}),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}
