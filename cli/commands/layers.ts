import type { Command } from 'commander';
import { ApiError } from '../client.ts';
import { writeOut } from '../terminal.ts';
import type { Layer } from '../types.ts';
import { action, type CommonOptions, clientFor, printJson, table, withConnection } from './common.ts';

interface LayersOptions extends CommonOptions {
  service?: string;
}

/** What a layer's row shows after its service (when there is one). */
function cells(layer: Layer): string[] {
  return [
    layer.public_id,
    layer.title,
    layer.geometry_type ?? (layer.is_sql_view ? 'sql view' : ''),
    layer.enabled ? 'yes' : 'no',
    layer.public ? 'yes' : 'no',
    layer.id,
  ];
}

const HEADER = ['PUBLIC_ID', 'TITLE', 'GEOMETRY', 'ENABLED', 'PUBLIC', 'ID'];

export function registerLayers(program: Command): void {
  const layers = program.command('layers').description('read the layers of a workspace');

  withConnection(
    layers
      .command('list')
      .description("list a service's layers, or (without --service) every service's layers in the workspace")
      .option('-s, --service <service>', 'only the layers of this service (id or name)')
      .option('--json', 'print the layers as JSON: the API’s layer objects, one array'),
  ).action(
    action(async (options: LayersOptions) => {
      const client = clientFor(options);
      if (options.service !== undefined) {
        const found = await client.listLayers(options.workspace, options.service);
        if (options.json) printJson(found);
        else if (found.length === 0) writeOut('no layers\n');
        else writeOut(`${table(HEADER, found.map(cells))}\n`);
        return 0;
      }
      // No workspace-wide list operation: each service's layers, in the order the services come.
      const services = await client.listServices(options.workspace);
      const rows: { service: string; layer: Layer }[] = [];
      for (const service of services) {
        const found = await client.listLayers(options.workspace, service.id).catch((error: unknown) => {
          // A service deleted since the list was read has no layers to show.
          if (error instanceof ApiError && error.reason === 'service_not_found') return [];
          throw error;
        });
        for (const layer of found) rows.push({ service: service.name, layer });
      }
      if (options.json) printJson(rows.map((r) => r.layer));
      else if (rows.length === 0) writeOut('no layers\n');
      else
        writeOut(
          `${table(
            ['SERVICE', ...HEADER],
            rows.map((r) => [r.service, ...cells(r.layer)]),
          )}\n`,
        );
      return 0;
    }),
  );
}
