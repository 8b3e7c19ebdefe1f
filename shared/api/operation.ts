import type * as z from 'zod/mini';

/** Permission classes of DESIGN §6. */
export type Permission = 'public' | 'authenticated' | 'read' | 'write' | 'manage' | 'global' | 'data';

/** DynamoDB actions a route's function needs; CDK grants exactly these (least privilege). */
export type DataAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchWriteItem'
  | 'ConditionCheckItem'
  /** PutItem of audit records only (ADR 0094): granted on the audit partitions (`dynamodb:LeadingKeys`). */
  | 'PutAuditRecord';

/** Any zod (mini or classic) schema. */
export type Schema = z.ZodMiniType;

/** One documented response of an operation. */
export interface ResponseSpec {
  description: string;
  schema?: Schema;
  headers?: Record<string, string>;
  /** A body that is not JSON (bytes): the media types it is answered with (e.g. an image). */
  mediaTypes?: readonly string[];
}

/**
 * The worked example of an operation (issue #14, ADR 0095), published in the OpenAPI document and
 * checked by test/contract/openapi-examples.test.ts against the same zod schemas the handler uses.
 */
export interface OperationExamples {
  /** Path and query parameters of the example request (strings, as sent). */
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** The JSON request body (operations with a body schema). */
  request?: unknown;
  /** The body of the success answer: the lowest 2xx status that declares a schema. */
  response?: unknown;
}

/** One entry of THE route table. */
export interface Operation<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
> {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path under the API root, e.g. `/api/v1/workspaces/{workspace}`. */
  path: string;
  /** Module path of the Lambda entry point, relative to the repository root. */
  handler: string;
  permission: Permission;
  summary: string;
  description?: string;
  tags: string[];
  request: { params?: P; query?: Q; body?: B };
  /** Operation-specific responses; the common errors (401, 403, 413, 426, 429, 503) are added for all. */
  responses: Record<number, ResponseSpec>;
  data: readonly DataAction[];
  /** Connection secrets it handles: CDK grants the matching KMS actions and sets KMS_KEY_ID. */
  secrets?: readonly ('encrypt' | 'decrypt')[];
  /** API Gateway usage keys of the pool it creates or deletes (ADR 0111; AWS only): CDK grants them, tag-scoped. */
  usageKeys?: readonly ('create' | 'delete')[];
  /**
   * Lists the persistent tile cache's store (ADR 0139; the integrity check counts its tiles): CDK
   * grants `s3:ListBucket` on the tile bucket, nothing of its objects, and sets TILE_CACHE_BUCKET.
   */
  listsTileStore?: true;
  /** Reads raster sources from the S3 buckets the stage allows (cdk.json `mosaicBuckets`). */
  readsMosaicSources?: true;
  /** `{workspace}` also resolves a workspace hidden by its recursive deletion (deleteWorkspace answers with it). */
  resolvesDeletingWorkspace?: true;
  /** `{service}` also resolves a service being deleted (deleteService answers with its deletion). */
  resolvesDeletingService?: true;
  /**
   * A change that uses `{service}` only to name what it changes: it neither connects with the
   * service's password nor writes the service item. It takes the service the authorizer read for
   * this very request (ADR 0099), as reads do, instead of reading it again; the store refuses to
   * write a service whose password was withheld.
   */
  takesCarriedService?: true;
  /** Workflows it starts: CDK grants `states:StartExecution` on that state machine only. */
  starts?: readonly ('deletion' | 'import' | 'harvest' | 'tileCache')[];
  /** The import upload store: presign a form POST, look at an upload, delete one (S3 on AWS). */
  uploads?: readonly ('presign' | 'head' | 'delete')[];
  /** Reads the import database (preview of staged features). */
  importDatabase?: true;
  /**
   * Opens PostgreSQL connections (the operator's PostGIS, the import database): with cdk.json `vpc`
   * its function runs in the operator's VPC, and no other route's does (ADR 0112). A contract test
   * holds it to the handlers whose bundle loads the `pg` driver.
   */
  postgres?: true;
  /** The body is raw bytes (not JSON): makeHandler skips parsing and passes them as `rawBody`. */
  rawBody?: true;
  /** Media types a raw (`rawBody`) request body is documented with. */
  requestMediaTypes?: readonly string[];
  /** A request and response example (required of every operation; see OperationExamples). */
  examples?: OperationExamples;
  /** A body limit below MAX_BODY_BYTES for this operation (413 above it, checked on bytes first). */
  maxBodyBytes?: number;
}

/** Declares an operation with its literal types kept. */
export function defineOperation<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(op: Operation<P, Q, B>): Operation<P, Q, B> {
  return op;
}

/** The parsed input types of an operation. */
export type InputOf<S> = [NonNullable<S>] extends [never]
  ? undefined
  : NonNullable<S> extends Schema
    ? z.output<NonNullable<S>>
    : undefined;

/**
 * The path of a route with its `{name}` parameters filled in, each URI-encoded: the Location of a
 * resource is its GET (or DELETE) route's path, taken from the route table, never spelt again.
 */
export function locationOf<Op extends Operation>(
  op: Op,
  params: NonNullable<InputOf<Op['request']['params']>>,
): string {
  const values = params as Record<string, unknown>;
  return op.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (typeof value !== 'string') throw new Error(`${op.operationId}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
}
