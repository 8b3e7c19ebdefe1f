import type { DataAction } from '#api/operation.ts';

/**
 * The table actions of the scheduled sweep (ADR 0093), granted by CDK and checked locally:
 * Query (the GSI1 listings of unfinished deletions and working imports), GetItem (an import job, a
 * deletion as its failure is recorded), UpdateItem (a deletion's restart and failure with its
 * workspace counter; a harvest or tile cache job's restart) and PutItem (an import's restart or
 * failure: the job and its history event).
 * The tile cache's sweep (ADR 0139) reads each workspace's layers (Query), settings (BatchGetItem),
 * services and cache records (GetItem) and subtracts what it removed from the usage (UpdateItem).
 */
export const sweepData: readonly DataAction[] = [
  'Query',
  'GetItem',
  'BatchGetItem',
  'UpdateItem',
  'PutItem',
  // A harvest or tile cache job it gives up on ends as the job's own failure does: one transaction
  // that releases the job's marker (Delete) and carries its audit record (ADR 0094).
  'DeleteItem',
  'PutAuditRecord',
];

/** Entry point of the sweep function, relative to the repository root. */
export const sweepEntry = 'functions/sweeps/sweep.ts';
