import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { publishCatalogEvents } from '#domain/catalog-events.ts';
import { errorFields, logger } from '#log/logger.ts';
import { awsClient } from '#telemetry/aws-clients.ts';
import { auditRecordOf, catalogEventBus } from '#wiring/events.ts';

/** How often an idle shard is asked for records. */
const IDLE_POLL_MS = 100;

/**
 * Reads DynamoDB Local's stream of the table the way the deployed stack's stream reader does
 * (ADR 0094): every audit record inserted becomes its catalog events, in stream order, on the
 * installed bus (the local feed). Starts from the oldest record the stream keeps.
 */
export function startChangeStream(options: { endpoint: string; tableName: string; region: string }): {
  close(): Promise<void>;
} {
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const client = { endpoint: options.endpoint, region: options.region, credentials };
  const streams = awsClient(new DynamoDBStreamsClient(client));
  /** The table's stream, once the table exists (a host started without bootstrap creates none). */
  let streamArn: string | undefined;
  async function findStream(): Promise<string | undefined> {
    const tables = new DynamoDBClient(client);
    try {
      const { Table } = await tables.send(new DescribeTableCommand({ TableName: options.tableName }));
      return Table?.LatestStreamArn;
    } catch (error) {
      if ((error as { name?: string }).name === 'ResourceNotFoundException') return undefined;
      throw error;
    } finally {
      tables.destroy();
    }
  }
  const bus = catalogEventBus();
  /** Open shards → their next iterator; finished shards are remembered so they aren't read again. */
  const iterators = new Map<string, string>();
  const finished = new Set<string>();
  let stopped = false;

  async function discover(streamArn: string): Promise<void> {
    let start: string | undefined;
    do {
      const out = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
      );
      for (const shard of out.StreamDescription?.Shards ?? []) {
        const id = shard.ShardId as string;
        if (iterators.has(id) || finished.has(id)) continue;
        // A child shard waits for its parent, so the stream's order holds.
        if (shard.ParentShardId && iterators.has(shard.ParentShardId)) continue;
        const it = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: id,
            ShardIteratorType: 'TRIM_HORIZON',
          }),
        );
        if (it.ShardIterator) iterators.set(id, it.ShardIterator);
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  /** One pass over the open shards; true when any gave records. */
  async function pass(): Promise<boolean> {
    let any = false;
    for (const [id, iterator] of [...iterators]) {
      const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      const records = out.Records ?? [];
      for (const record of records) {
        // A record that can't be read is logged and passed over: one bad record must not stop
        // the stream (on AWS the event source mapping sets it aside in the dead-letter queue).
        try {
          const audit = auditRecordOf(record);
          if (audit) await publishCatalogEvents(bus, [audit]);
        } catch (error) {
          logger.error('change stream record not published', {
            sequence_number: record.dynamodb?.SequenceNumber,
            ...errorFields(error),
          });
        }
      }
      any ||= records.length > 0;
      if (out.NextShardIterator) iterators.set(id, out.NextShardIterator);
      else {
        iterators.delete(id);
        finished.add(id);
      }
    }
    return any;
  }

  const loop = (async () => {
    let rounds = 0;
    while (!stopped) {
      try {
        streamArn ??= await findStream();
        if (!streamArn) {
          await new Promise((r) => setTimeout(r, 1000));
          continue;
        }
        if (rounds++ % 20 === 0 || iterators.size === 0) await discover(streamArn);
        const busy = await pass();
        if (!busy) await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
      } catch (error) {
        if (stopped) break;
        logger.warn('change stream read failed; retrying', errorFields(error));
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();

  return {
    async close() {
      stopped = true;
      await loop;
      streams.destroy();
    },
  };
}
