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
  service?: string;
  layer?: string[];
  replace?: string[];
  append?: string[];
  publish?: boolean;
}

/** Collects a repeatable option's values. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

type LayerEntry = {
  source_layer?: string;
  public_id?: string;
  target?: { layer: string; mode: 'replace' | 'append' };
};

/**
 * The createImport `layers` of --layer/--replace/--append (ADR 0126, 0127): `NAME` names the
 * file's first layer, `SOURCE=NAME` one layer of the file; a source layer is named once.
 */
export function layerEntries(options: Pick<ImportOptions, 'layer' | 'replace' | 'append'>): LayerEntry[] {
  const entries: LayerEntry[] = [];
  const seen = new Set<string>();
  const add = (flag: string, value: string, make: (name: string) => LayerEntry) => {
    const at = value.indexOf('=');
    const source = at >= 0 ? value.slice(0, at) : undefined;
    const name = at >= 0 ? value.slice(at + 1) : value;
    if (!name || source === '') throw new UsageError(`${flag} ${value}: give NAME or SOURCE_LAYER=NAME`);
    const key = source ?? '';
    if (seen.has(key))
      throw new UsageError(
        `${flag} ${value}: the ${source ? `layer '${source}'` : "file's first layer"} is named twice`,
      );
    seen.add(key);
    entries.push({ ...(source !== undefined ? { source_layer: source } : {}), ...make(name) });
  };
  for (const v of options.layer ?? []) add('--layer', v, (name) => ({ public_id: name }));
  for (const v of options.replace ?? [])
    add('--replace', v, (name) => ({ target: { layer: name, mode: 'replace' } }));
  for (const v of options.append ?? [])
    add('--append', v, (name) => ({ target: { layer: name, mode: 'append' } }));
  return entries;
}

export function registerImport(program: Command): void {
  const cmd = program
    .command('import')
    .description('upload a file and import it (GeoJSON, CSV, shapefile zip, GeoPackage, FlatGeobuf, ...)')
    .argument('<file>', 'the file to import')
    .option('--name <name>', 'name of the import (default: the file name)')
    .option('--service <service>', 'name of the service the new layers are published in')
    .option('--service-name <service>', 'the same as --service')
    .option(
      '--layer <name>',
      "public id of the file's first layer, or SOURCE_LAYER=NAME for one layer of the file (repeatable)",
      collect,
    )
    .option(
      '--replace <layer>',
      "replace this existing layer's data with the file's first layer (or SOURCE_LAYER=LAYER; repeatable)",
      collect,
    )
    .option(
      '--append <layer>',
      "append the file's first layer to this existing layer (or SOURCE_LAYER=LAYER; repeatable)",
      collect,
    )
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
      if (options.service && options.serviceName && options.service !== options.serviceName)
        throw new UsageError('--service and --service-name name two services: give one');
      const serviceName = options.service ?? options.serviceName;
      const layers = layerEntries(options);
      const client = clientFor(options);
      const out = output();
      const created = await client.createImport(options.workspace, {
        ...(options.name ? { name: options.name } : {}),
        source: { kind: 'upload', filename: basename(path), size_bytes: info.size },
        ...(serviceName ? { service_name: serviceName } : {}),
        ...(layers.length ? { layers } : {}),
        ...(options.publish ? { auto_publish: true } : {}),
      });
      if (!created.upload) throw new CliError(line`the API gave import ${created.id} no upload URL`);
      const onlyTargets = layers.length > 0 && layers.every((l) => l.target);
      out.log(
        onlyTargets
          ? line`import ${created.id} created (into existing layers)`
          : line`import ${created.id} created (service ${created.service_name})`,
      );
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
