import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { tileCacheWorkflow } from '../workflows/tile-cache-workflow.ts';
import type { ApiFunction } from './api-function.ts';
import { servicePasswordDecrypt } from './data-plane.ts';
import { type JobLoopHostProps, JobLoopWorkflow } from './job-loop-workflow.ts';
import { grantTileStore, type TileCache } from './tile-cache.ts';
import type { VpcPlacement } from './vpc-placement.ts';

export interface TileCacheWorkflowProps extends JobLoopHostProps {
  tileCache: TileCache;
  /** The operator's VPC (cdk.json `vpc`, ADR 0112): the step renders tiles from PostGIS. */
  vpc?: VpcPlacement;
}

/**
 * The tile cache job workflow (ADR 0139): a job loop ({@link JobLoopWorkflow}) deployed from the ASL
 * in `infra/workflows/tile-cache-workflow.ts`. The step renders tiles from the operator's PostGIS
 * as the data plane does (in the VPC when one is configured; decrypting service passwords once
 * {@link TileCacheWorkflow.useSecretsKey} is called) and reads, writes and deletes the tile
 * objects; the failure recorder only touches its job's items.
 */
export class TileCacheWorkflow extends JobLoopWorkflow {
  constructor(scope: Construct, id: string, props: TileCacheWorkflowProps) {
    const { bucket } = props.tileCache;
    super(scope, id, {
      table: props.table,
      bundles: props.bundles,
      environment: props.environment,
      logRetention: props.logRetention,
      spec: tileCacheWorkflow,
      tasks: { step: { environment: { TILE_CACHE_BUCKET: bucket.bucketName } } },
      // The step (tileCacheWorkflow.access: postgres) renders tiles from the operator's PostGIS.
      ...(props.vpc ? { vpc: props.vpc } : {}),
      configure: (task, fn) => {
        if (task === 'step') grantTileStore(fn.role, fn, bucket.bucketName, props.tileCache.bucketLogicalId);
      },
    });
  }

  /**
   * The key that encrypts connection passwords (it lives with the API, ADR 0077): the step decrypts
   * service passwords with it, exactly as the data plane does (service-password contexts only).
   */
  useSecretsKey(key: IKey): void {
    const step = this.functions.get('step') as ApiFunction;
    step.function.addEnvironment('KMS_KEY_ID', key.keyArn);
    step.role.addToPolicy(servicePasswordDecrypt(key, ['kms:Decrypt']));
  }
}
