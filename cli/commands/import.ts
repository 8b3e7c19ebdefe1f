import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { followImport } from '../follow.ts';
import { formatBytes } from '../progress.ts';
import { line, writeOut } from '../terminal.ts';
import { uploadFile } from '../upload.ts';
import {
  action,
  CliError,
  type CommonOptions,
  clientFor,
  output,
  pollOptions,
  printJson,
  reportOutcome,
  UsageError,
  type WaitOptions,
  withConnection,
  withPolling,
} from './common.ts';

interface ImportOptions extends CommonOptions, WaitOptions {
  name?: string;
  serviceName?: string;
  publish?: boolean;
}

export function registerImport(program: Command): void {
  const cmd = program
    .command('import')
    .description('upload a file and import it (GeoJSON, CSV, shapefile zip, GeoPackage, FlatGeobuf, ...)')
    .argument('<file>', 'the file to import')
    .option('--name <name>', 'name of the import (default: the file name)')
    .option('--service-name <service>', 'name of the service the layers are published in')
    .option('--publish', 'publish once loaded (auto_publish; implies --wait)')
    .option('--wait', 'follow the import until it is published, ready to publish, needs a plan or failed')
    .option('--json', 'print the import as JSON on stdout (the final one with --wait), nothing else');
  withPolling(withConnection(cmd));
  cmd.action(
    action(async (file: string, options: ImportOptions) => {
      const path = resolve(file);
      const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
        throw new UsageError(
          error.code === 'ENOENT' ? `no such file: ${file}` : `cannot read ${file}: ${error.message}`,
        );
      });
      if (!info.isFile()) throw new UsageError(`not a file: ${file}`);
      const client = clientFor(options);
      const out = output();
      const created = await client.createImport(options.workspace, {
        ...(options.name ? { name: options.name } : {}),
        source: { kind: 'upload', filename: basename(path), size_bytes: info.size },
        ...(options.serviceName ? { service_name: options.serviceName } : {}),
        ...(options.publish ? { auto_publish: true } : {}),
      });
      if (!created.upload) throw new CliError(line`the API gave import ${created.id} no upload URL`);
      out.log(line`import ${created.id} created (service ${created.service_name})`);
      const interrupt = () => {
        out.log(
          line`\ninterrupted; import ${created.id} stays as it is: geoplane imports get ${created.id} --workspace ${options.workspace}`,
        );
        process.exit(130);
      };
      process.once('SIGINT', interrupt);
      try {
        const bar = out.bar(
          'upload',
          info.size,
          'bytes',
          `sending ${basename(path)} (${formatBytes(info.size)})`,
        );
        let sent = 0;
        try {
          await uploadFile(client.connection, created.upload, path, info.size, (n) => {
            sent = n;
            bar.update(n);
          });
          bar.update(sent, { text: `uploaded ${formatBytes(sent)}` });
        } finally {
          bar.stop();
        }
        const started = await client.startImport(options.workspace, created.id);
        if (!options.wait && !options.publish) {
          if (options.json) printJson(started);
          else writeOut(`${line`import ${started.id}: ${started.status}`}\n`);
          return 0;
        }
        const job = await followImport(client, options.workspace, started, out, {
          ...pollOptions(options),
          fileSize: info.size,
        });
        return await reportOutcome(client, options.workspace, job, out, { json: options.json });
      } finally {
        process.removeListener('SIGINT', interrupt);
      }
    }),
  );
}
