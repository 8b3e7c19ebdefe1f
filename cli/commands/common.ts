import { type Command, InvalidArgumentError } from 'commander';
import { GeoPlaneClient } from '../client.ts';
import { CliError, EXIT, resolveConnection, UsageError } from '../config.ts';
import type { PollOptions } from '../follow.ts';
import { createOutput, formatBytes, formatCount, type Output } from '../progress.ts';
import { jsonText, line, plain, writeErr, writeOut } from '../terminal.ts';
import type { ImportJob } from '../types.ts';

/** Options every command that talks to the API takes. */
export interface CommonOptions {
  workspace: string;
  url?: string;
  apiKey?: string;
  json?: boolean;
}

export interface WaitOptions {
  wait?: boolean;
  interval: number;
  timeout?: number;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a positive number of seconds');
  return n;
}

export function withConnection(cmd: Command): Command {
  return cmd
    .requiredOption('-w, --workspace <workspace>', 'workspace id or name')
    .option('--url <url>', 'API base URL (else GEOPLANE_URL, else the local bootstrap.json)')
    .option('--api-key <key>', 'API key (else GEOPLANE_API_KEY, else the local bootstrap.json)');
}

export function withPolling(cmd: Command): Command {
  return cmd
    .option('--interval <seconds>', 'seconds between status polls', seconds, 1)
    .option(
      '--timeout <seconds>',
      'give up waiting after this many seconds (default: wait forever)',
      seconds,
    );
}

export function pollOptions(options: WaitOptions): PollOptions {
  return {
    intervalMs: Math.round(options.interval * 1000),
    ...(options.timeout !== undefined ? { timeoutMs: Math.round(options.timeout * 1000) } : {}),
  };
}

export function clientFor(options: CommonOptions): GeoPlaneClient {
  return new GeoPlaneClient(
    resolveConnection({
      ...(options.url !== undefined ? { url: options.url } : {}),
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    }),
  );
}

/**
 * Runs an action: an error is `error: …` on stderr (nothing on stdout) and the exit code of its
 * kind — 1 refused, 2 usage, 3 unreachable (`EXIT`); an unexpected error is 1.
 */
export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<number | undefined>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await fn(...args);
      if (code) process.exitCode = code;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      writeErr(`error: ${message}\n`);
      if (!(error instanceof CliError) && process.env.GEOPLANE_DEBUG)
        writeErr(`${(error as Error)?.stack ?? String(error)}\n`);
      process.exitCode = error instanceof CliError ? error.exitCode : EXIT.refused;
    }
  };
}

/** Left-aligned columns, two spaces apart; every cell is plain text (cells hold the server's values). */
export function table(header: string[], cells: string[][]): string {
  const rows = cells.map((row) => row.map(plain));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function printJson(value: unknown): void {
  writeOut(`${jsonText(value)}\n`);
}

/** A one-screen description of an import (every value the server's, so each one plain). */
export function describeImport(job: ImportJob): string {
  const lines = [
    line`import   ${job.id}`,
    line`name     ${job.name}`,
    line`status   ${job.status} (phase ${job.phase})`,
    line`service  ${job.service_name}${job.service_id ? ` (${plain(job.service_id)})` : ''}`,
    line`progress ${formatBytes(job.processed_bytes)}, ${formatCount(job.processed_features)} features, ${job.processed_layers}/${job.total_layers} layers`,
  ];
  if (job.source_filename) lines.push(line`file     ${job.source_filename}`);
  if (job.discovery) {
    lines.push(line`format   ${job.discovery.format}, ${formatBytes(job.discovery.size_bytes)}`);
    for (const layer of job.discovery.layers)
      lines.push(
        line`  layer ${layer.name}: ${layer.geometry_type ?? 'no geometry'}, ${formatCount(layer.feature_count)} features${layer.srid ? `, EPSG:${plain(layer.srid)}` : ''}`,
      );
  }
  for (const w of job.warnings ?? []) lines.push(line`warning  ${w}`);
  if (job.error_message) lines.push(line`error    ${job.error_message}`);
  lines.push(line`created  ${job.created_at}`);
  return lines.join('\n');
}

/** `--workspace <ws>` as the user would type it again in a hint. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9._:/@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Prints how an import ended (stdout; `--json`: the job only) and returns the exit code:
 * 1 when it failed or was cancelled (and `cancelledOk` is not set), else 0.
 */
export async function reportOutcome(
  client: GeoPlaneClient,
  workspace: string,
  job: ImportJob,
  out: Output,
  options: { json?: boolean; cancelledOk?: boolean } = {},
): Promise<number> {
  const ws = shellWord(workspace);
  const failed = job.status === 'failed' || (job.status === 'cancelled' && !options.cancelledOk);
  const why = job.error_message ?? 'no reason given';
  if (options.json) {
    printJson(job);
    if (job.status === 'failed') out.log(line`error: import ${job.id} failed: ${why}`);
    return failed ? 1 : 0;
  }
  // Every value below is the server's: each goes through `line` (ADR 0109).
  const say = (text = '') => writeOut(`${text}\n`);
  const service = line`${job.service_name}${job.service_id ? ` (${plain(job.service_id)})` : ''}`;
  switch (job.status) {
    case 'published': {
      say(line`import ${job.id} published`);
      say(`service ${service}`);
      if (job.service_id) {
        const layers = await client.listLayers(workspace, job.service_id);
        if (layers.length === 0) say('no layers');
        else {
          say(`layers (${layers.length}):`);
          for (const layer of layers) say(line`  ${layer.public_id}  ${layer.title}`);
        }
      }
      break;
    }
    case 'ready_to_publish':
      say(
        line`import ${job.id} is ready to publish: ${job.processed_layers}/${job.total_layers} layers, ${formatCount(job.processed_features)} features staged`,
      );
      say(`${line`publish it with: geoplane imports publish ${job.id} --workspace `}${ws} --wait`);
      break;
    case 'awaiting_plan':
      say(line`import ${job.id} needs a plan before it can load`);
      for (const w of [...(job.discovery?.warnings ?? []), ...(job.warnings ?? [])].filter(
        (w, i, all) => all.indexOf(w) === i,
      ))
        say(line`  warning: ${w}`);
      say(
        line`set a plan (PUT /workspaces/${workspace}/imports/${job.id}/plan, e.g. a layer's source_srid for an unknown CRS), or cancel: geoplane imports cancel ${job.id} --workspace ` +
          ws,
      );
      break;
    case 'failed':
      writeErr(`${line`error: import ${job.id} failed: ${why}`}\n`);
      say(line`import ${job.id} failed (phase ${job.phase})`);
      break;
    case 'cancelled':
      say(line`import ${job.id} cancelled`);
      break;
    case 'rolled_back':
      say(line`import ${job.id} rolled back: service ${job.service_name} and its layers are gone`);
      break;
    default:
      say(line`import ${job.id}: ${job.status} (phase ${job.phase})`);
  }
  if (job.status !== 'awaiting_plan') for (const w of job.warnings ?? []) say(line`warning: ${w}`);
  return failed ? 1 : 0;
}

export function output(): Output {
  return createOutput(process.stderr);
}

export { CliError, UsageError };
