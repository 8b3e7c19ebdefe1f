import { type Command, InvalidArgumentError } from 'commander';
import { IMPORT_STATUSES } from '#client/index.ts';
import { followImport, followRollback } from '../follow.ts';
import { formatCount } from '../progress.ts';
import { line, writeErr, writeOut } from '../terminal.ts';
import type { ImportStatus } from '../types.ts';
import {
  action,
  type CommonOptions,
  clientFor,
  describeImport,
  output,
  pollOptions,
  printJson,
  reportOutcome,
  table,
  type WaitOptions,
  withConnection,
  withPolling,
} from './common.ts';

function status(value: string): ImportStatus {
  if (!(IMPORT_STATUSES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`one of ${IMPORT_STATUSES.join(', ')}`);
  return value as ImportStatus;
}

/** `--limit`: a page size the API takes (1-1000). */
function pageLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new InvalidArgumentError('a whole number from 1 to 1000');
  return n;
}

type Opts = CommonOptions & WaitOptions;

export function registerImports(program: Command): void {
  const imports = program.command('imports').description('manage imports');

  withConnection(
    imports
      .command('get')
      .description('show an import: status, phase, progress, discovery')
      .argument('<id>', 'import id')
      .option('--json', 'print the import as JSON'),
  ).action(
    action(async (id: string, options: Opts) => {
      const job = await clientFor(options).getImport(options.workspace, id);
      if (options.json) printJson(job);
      else writeOut(`${describeImport(job)}\n`);
      return 0;
    }),
  );

  withConnection(
    imports
      .command('list')
      .description(
        'list the imports of a workspace in the order they were created (every page; --limit/--cursor: one page)',
      )
      .option('--status <status>', 'only imports with this status', status)
      .option('--limit <n>', 'one page of at most n imports (1-1000)', pageLimit)
      .option('--cursor <cursor>', 'the page after this cursor (next_cursor of the page before)')
      .option('--json', 'print the imports as JSON (--limit/--cursor: the page, with next_cursor)'),
  ).action(
    action(async (options: Opts & { status?: ImportStatus; limit?: number; cursor?: string }) => {
      const client = clientFor(options);
      const paged = options.limit !== undefined || options.cursor !== undefined;
      const page = paged
        ? await client.importsPage(options.workspace, {
            ...(options.status ? { status: options.status } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
          })
        : { imports: await client.listImports(options.workspace, options.status) };
      if (options.json) {
        printJson(paged ? page : page.imports);
        return 0;
      }
      const jobs = page.imports;
      if (jobs.length === 0) writeOut('no imports\n');
      else
        writeOut(
          `${table(
            ['ID', 'NAME', 'STATUS', 'PHASE', 'SERVICE', 'FEATURES', 'CREATED'],
            jobs.map((j) => [
              j.id,
              j.name,
              j.status,
              j.phase,
              j.service_name,
              formatCount(j.processed_features),
              j.created_at,
            ]),
          )}\n`,
        );
      if (page.next_cursor) writeErr(`${line`more: --cursor ${page.next_cursor}`}\n`);
      return 0;
    }),
  );

  withConnection(
    imports
      .command('history')
      .description('list the transitions of an import, oldest first')
      .argument('<id>', 'import id')
      .option('--json', 'print the events as JSON'),
  ).action(
    action(async (id: string, options: Opts) => {
      const events = await clientFor(options).importHistory(options.workspace, id);
      if (options.json) printJson(events);
      else
        writeOut(
          `${table(
            ['TIME', 'STATUS', 'PHASE', 'FEATURES', 'ERROR'],
            events.map((e) => [
              e.created_at,
              e.status,
              e.phase,
              formatCount(e.processed_features),
              e.error_message ?? '',
            ]),
          )}\n`,
        );
      return 0;
    }),
  );

  withPolling(
    withConnection(
      imports
        .command('publish')
        .description('publish an import that is ready to publish')
        .argument('<id>', 'import id')
        .option('--wait', 'follow the import until it is published (or failed)')
        .option('--json', 'print the import as JSON'),
    ),
  ).action(
    action(async (id: string, options: Opts) => {
      const client = clientFor(options);
      const out = output();
      const job = await client.publishImport(options.workspace, id);
      if (!options.wait) {
        if (options.json) printJson(job);
        else writeOut(`${line`import ${job.id}: ${job.status}`}\n`);
        return 0;
      }
      const done = await followImport(client, options.workspace, job, out, pollOptions(options));
      return reportOutcome(client, options.workspace, done, out, { json: options.json });
    }),
  );

  withPolling(
    withConnection(
      imports
        .command('rollback')
        .description('take a published import away again: its service, layers and tables')
        .argument('<id>', 'import id')
        .option('--wait', "follow the deletion's progress until the import is rolled back (or failed)")
        .option('--json', 'print the import as JSON'),
    ),
  ).action(
    action(async (id: string, options: Opts) => {
      const client = clientFor(options);
      const out = output();
      const job = await client.rollbackImport(options.workspace, id);
      if (!options.wait) {
        if (options.json) printJson(job);
        else
          writeOut(
            `${line`import ${job.id}: ${job.status}${job.rollback_operation_id ? ` (deletion ${job.rollback_operation_id})` : ''}`}\n`,
          );
        return 0;
      }
      const done = await followRollback(client, options.workspace, job, out, pollOptions(options));
      return reportOutcome(client, options.workspace, done, out, { json: options.json });
    }),
  );

  withPolling(
    withConnection(
      imports
        .command('retry')
        .description('retry a failed import where it failed (load, publish or rollback)')
        .argument('<id>', 'import id')
        .option('--wait', 'follow the import until it is published, ready to publish, needs a plan or failed')
        .option('--json', 'print the import as JSON (the final one with --wait)'),
    ),
  ).action(
    action(async (id: string, options: Opts) => {
      const client = clientFor(options);
      const out = output();
      const job = await client.retryImport(options.workspace, id);
      if (!options.wait) {
        if (options.json) printJson(job);
        else writeOut(`${line`import ${job.id}: ${job.status}`}\n`);
        return 0;
      }
      const done =
        job.status === 'rolling_back'
          ? await followRollback(client, options.workspace, job, out, pollOptions(options))
          : await followImport(client, options.workspace, job, out, pollOptions(options));
      return reportOutcome(client, options.workspace, done, out, { json: options.json });
    }),
  );

  withPolling(
    withConnection(
      imports
        .command('cancel')
        .description('cancel an import before it is published (its staged data is dropped)')
        .argument('<id>', 'import id')
        .option('--wait', 'follow the import until it is cancelled')
        .option('--json', 'print the import as JSON'),
    ),
  ).action(
    action(async (id: string, options: Opts) => {
      const client = clientFor(options);
      const out = output();
      const job = await client.cancelImport(options.workspace, id);
      if (!job) {
        // 204: cancelled at once (it was still awaiting its upload).
        if (options.json) printJson(await client.getImport(options.workspace, id));
        else writeOut(`${line`import ${id}: cancelled`}\n`);
        return 0;
      }
      if (!options.wait) {
        if (options.json) printJson(job);
        else writeOut(`${line`import ${job.id}: ${job.status}`}\n`);
        return 0;
      }
      const done = await followImport(client, options.workspace, job, out, pollOptions(options));
      return reportOutcome(client, options.workspace, done, out, { json: options.json, cancelledOk: true });
    }),
  );
}
