import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  HttpMethods,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { StageConfig } from './stage-config.ts';

/** Where uploads land in the bucket (the domain names keys `uploads/<workspace>/<import>`, ids only; ADR 0106). */
export const uploadPrefix = 'uploads/';

/** The prefix of the upload bucket's server access logs in the log bucket. */
export const uploadAccessLogPrefix = 'import-uploads/';

/** Days incomplete multipart uploads are kept before S3 aborts them. */
export const abortIncompleteUploadsAfterDays = 1;

/** The buckets `s3://` import URIs may name (cdk.json `importBuckets`). */
export function importBucketsOf(config: StageConfig): string[] {
  return (config.importBuckets ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
}

/** Origins browsers may POST uploads from (cdk.json `importUploadOrigins`; any by default). */
export function uploadOriginsOf(config: StageConfig): string[] {
  const origins = (config.importUploadOrigins ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  return origins.length > 0 ? origins : ['*'];
}

/**
 * The environment of the functions that handle imports (ADR 0086), as `importConfig()` in
 * `shared/config/env.ts` reads it. The import database goes in without credentials: those stay in
 * its secret, which the functions read at run time.
 */
export function importEnvironment(config: StageConfig, uploadBucketName: string): Record<string, string> {
  const db = config.importDatabase;
  const buckets = importBucketsOf(config);
  return {
    IMPORT_UPLOAD_BUCKET: uploadBucketName,
    IMPORT_MAX_BYTES: String(config.importMaxBytes),
    ...(buckets.length > 0 ? { IMPORT_BUCKETS: buckets.join(',') } : {}),
    ...(db
      ? {
          IMPORT_DATABASE: JSON.stringify({
            host: db.host,
            port: db.port,
            database: db.database,
            ...(db.sslmode ? { sslmode: db.sslmode } : {}),
          }),
          IMPORT_DATABASE_SECRET_ARN: db.secretArn,
        }
      : {}),
  };
}

/** ARN of the bucket named `bucketName` (a name or a token of one), as IAM names it. */
export function bucketArn(scope: Construct, bucketName: string): string {
  return Stack.of(scope).formatArn({ service: 's3', region: '', account: '', resource: bucketName });
}

/** ARN pattern of the uploaded objects: `arn:<partition>:s3:::<bucket>/uploads/*`. */
export function uploadObjectsArn(scope: Construct, bucketName: string): string {
  return `${bucketArn(scope, bucketName)}/${uploadPrefix}*`;
}

/**
 * The cdk-nag finding of a statement on {@link uploadObjectsArn}: `bucketRef` is how cdk-nag
 * renders the bucket's name (`<LogicalId>` of the bucket in its stack, or of the nested stack's
 * parameter that carries it).
 */
export function uploadObjectsFinding(bucketRef: string): string {
  return `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::<${bucketRef}>/${uploadPrefix}*]`;
}

/**
 * Lets a role act on uploaded objects only (`uploads/*` of the upload bucket), with exactly the
 * given object actions; `list` adds s3:ListBucket on the bucket, so that a missing object is a 404
 * (NotFound) to it rather than a 403 (S3 hides absence from callers who may not list).
 */
export function grantUploads(
  role: IRole,
  scope: Construct,
  bucketName: string,
  bucketRef: string,
  actions: readonly ('s3:PutObject' | 's3:GetObject' | 's3:DeleteObject')[],
  list: boolean,
): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: [...new Set(actions)], resources: [uploadObjectsArn(scope, bucketName)] }),
  );
  if (list) {
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucketArn(scope, bucketName)] }),
    );
  }
  Validations.of(role).acknowledge({
    id: uploadObjectsFinding(bucketRef),
    reason:
      'Upload keys are made per import at run time (uploads/<workspace>/<import>); the grant is ' +
      'limited to the uploads/ prefix of the import upload bucket and to the object actions the route ' +
      'or task declares (ADR 0086).',
  });
}

/** Lets a role read the import database's secret (its logins), and no other secret. */
export function grantImportDatabaseSecret(role: IRole, secretArn: string): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secretArn] }),
  );
}

export interface ImportUploadsProps {
  config: StageConfig;
}

/**
 * The upload bucket of imports (ADR 0086): browsers POST files into it with a presigned form (the
 * API never sees the bytes); the import workflow reads them from there. Private, SSE-S3, TLS only,
 * no versions; uploads expire after `importUploadExpiryDays`, incomplete multipart uploads after a
 * day. Its server access logs go to a log bucket of their own. Both are retained with the stack,
 * like the catalog table.
 */
export class ImportUploads extends Construct {
  readonly bucket: Bucket;
  readonly accessLogs: Bucket;

  constructor(scope: Construct, id: string, props: ImportUploadsProps) {
    super(scope, id);
    const { config } = props;
    const logDays = config.logRetentionDays;

    this.accessLogs = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // Server access logs can only be delivered to SSE-S3 buckets.
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules:
        logDays === RetentionDays.INFINITE
          ? []
          : [{ id: 'ExpireAccessLogs', expiration: Duration.days(logDays) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This bucket is the target of the upload bucket’s server access logs; logging its own access would ' +
        'need yet another bucket. Only the S3 logging service writes to it (its bucket policy).',
    });

    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: false,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: uploadAccessLogPrefix,
      // A presigned POST is a multipart form POST from the browser; the form's policy (key,
      // content-length-range, expiry) is what authorises it, CORS only lets the page read the answer.
      cors: [
        {
          allowedMethods: [HttpMethods.POST],
          allowedOrigins: uploadOriginsOf(config),
          allowedHeaders: ['*'],
          exposedHeaders: ['ETag', 'Location'],
          maxAge: 3600,
        },
      ],
      lifecycleRules: [
        {
          id: 'AbortIncompleteMultipartUploads',
          abortIncompleteMultipartUploadAfter: Duration.days(abortIncompleteUploadsAfterDays),
        },
        {
          id: 'ExpireUploads',
          prefix: uploadPrefix,
          expiration: Duration.days(config.importUploadExpiryDays),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** Logical id of the bucket in its stack: how cdk-nag renders a reference to it (`<id>`). */
  get bucketLogicalId(): string {
    const cfn = this.bucket.node.defaultChild as CfnBucket;
    return Stack.of(cfn).getLogicalId(cfn);
  }
}
