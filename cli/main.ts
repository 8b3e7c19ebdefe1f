import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerBootstrap } from './commands/bootstrap.ts';
import { registerImport } from './commands/import.ts';
import { registerImports } from './commands/imports.ts';

function version(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
  } catch {
    return 'unknown';
  }
}

const program = new Command()
  .name('geoplane')
  .description(
    'The GeoPlane command line: import files and manage imports; bootstrap a deployed stack.\n' +
      "Credentials: --url/--api-key, else GEOPLANE_URL/GEOPLANE_API_KEY, else the local host's " +
      'bootstrap.json (GEOPLANE_DATA_DIR or ./.local; its key only for its own URL). Plain http only ' +
      'to loopback. GEOPLANE_CA_FILE names a CA to trust.',
  )
  .version(version())
  .showHelpAfterError();

registerImport(program);
registerImports(program);
registerBootstrap(program);

await program.parseAsync(process.argv);
