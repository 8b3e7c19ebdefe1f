import { Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { harvestWorkflow } from '../workflows/harvest-workflow.ts';
import type { ApiFunction } from './api-function.ts';
import { type JobLoopHostProps, JobLoopWorkflow } from './job-loop-workflow.ts';

export interface HarvestWorkflowProps extends JobLoopHostProps {
  /** The S3 buckets raster mosaics may read (cdk.json `mosaicBuckets`). */
  mosaicBuckets: readonly string[];
}

/**
 * The mosaic harvest workflow (ADR 0136): a job loop ({@link JobLoopWorkflow}) deployed from the
 * ASL in `infra/workflows/harvest-workflow.ts`, one Lambda function per task with exactly the table
 * actions the workflow declares for it (the step also reads the stage's mosaic buckets), and a
 * role that may invoke those functions and nothing else.
 */
export class HarvestWorkflow extends JobLoopWorkflow {
  constructor(scope: Construct, id: string, props: HarvestWorkflowProps) {
    super(scope, id, {
      ...props,
      spec: harvestWorkflow,
      configure: (task, fn) => {
        if (task === 'step' && props.mosaicBuckets.length > 0) grantMosaicReads(fn, props.mosaicBuckets);
      },
    });
  }
}

/** Only reads, only of the buckets the stage names for raster mosaics. */
function grantMosaicReads(step: ApiFunction, buckets: readonly string[]): void {
  const stack = Stack.of(step);
  step.role.addToPolicy(
    new PolicyStatement({
      actions: ['s3:GetObject', 's3:ListBucket'],
      resources: buckets.flatMap((b) => [
        stack.formatArn({ service: 's3', region: '', account: '', resource: b }),
        stack.formatArn({ service: 's3', region: '', account: '', resource: `${b}/*` }),
      ]),
    }),
  );
  for (const b of buckets) {
    Validations.of(step.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${b}/*]`,
      reason: 'Mosaic granules are any objects under the service root in this bucket, named at run time.',
    });
  }
}
