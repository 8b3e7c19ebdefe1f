import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { bucketArn } from './import-uploads.ts';

/** Where the tile store keeps tiles in the bucket (`S3TileStore`: `tiles/<workspace>/…`). */
export const tilePrefix = 'tiles/';

/**
 * What the tile store does to tile objects: GetObject (and HeadObject, which it authorises),
 * PutObject (a new tile with `If-None-Match: *`, or a replacement) and DeleteObject (DeleteObjects
 * authorises each key with it). ListBucket on the bucket besides: listings, and a missing tile is
 * then a 404 (NoSuchKey), the cache miss the store expects, rather than a 403.
 */
export const tileObjectActions = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] as const;

/** Days before S3 aborts an incomplete multipart upload or expires a noncurrent version. */
export const tileCacheCleanupAfterDays = 1;

/** ARN pattern of the tile objects: `arn:<partition>:s3:::<bucket>/tiles/*`. */
export function tileObjectsArn(scope: Construct, bucketName: string): string {
  return `${bucketArn(scope, bucketName)}/${tilePrefix}*`;
}

/**
 * The cdk-nag finding of a statement on {@link tileObjectsArn}: `bucketRef` is how cdk-nag renders
 * the bucket's name (its logical id in its stack, or the nested stack's parameter that carries it).
 */
export function tileObjectsFinding(bucketRef: string): string {
  return `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::<${bucketRef}>/${tilePrefix}*]`;
}

/** Lets a role read, write and delete tile objects (`tiles/*`) and list the tile bucket, nothing else of S3. */
export function grantTileStore(role: IRole, scope: Construct, bucketName: string, bucketRef: string): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: [...tileObjectActions], resources: [tileObjectsArn(scope, bucketName)] }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucketArn(scope, bucketName)] }),
  );
  Validations.of(role).acknowledge({
    id: tileObjectsFinding(bucketRef),
    reason:
      'Tile keys are made per workspace, tile matrix set and tile at run time (tiles/<workspace>/…); the grant ' +
      'is limited to the tiles/ prefix of the tile cache bucket and to the tile store’s object actions (ADR 0139).',
  });
}

/**
 * The persistent tile cache's bucket (ADR 0139): the data plane and the tile cache workflow keep
 * rendered vector tiles under `tiles/`. Private, SSE-S3, TLS only, no versions; incomplete
 * multipart uploads and (were versioning ever turned on) noncurrent versions go after a day.
 * Retained with the stack, like the upload bucket; a cache, so no server access logs.
 */
export class TileCache extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: false,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        {
          id: 'AbortIncompleteMultipartUploads',
          abortIncompleteMultipartUploadAfter: Duration.days(tileCacheCleanupAfterDays),
        },
        {
          id: 'ExpireNoncurrentVersions',
          noncurrentVersionExpiration: Duration.days(tileCacheCleanupAfterDays),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'A cache of rendered tiles, read and written only by the data plane and the tile cache workflow (their ' +
        'roles); a server access log line per tile read would cost more than the cache. Requests to the data ' +
        'plane are in the API stage access log.',
    });
  }

  /** Logical id of the bucket in its stack: how cdk-nag renders a reference to it (`<id>`). */
  get bucketLogicalId(): string {
    const cfn = this.bucket.node.defaultChild as CfnBucket;
    return Stack.of(cfn).getLogicalId(cfn);
  }
}
