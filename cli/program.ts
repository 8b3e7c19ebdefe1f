import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerBootstrap } from './commands/bootstrap.ts';
import { registerImport } from './commands/import.ts';
import { registerImports } from './commands/imports.ts';
import { registerLayers } from './commands/layers.ts';

function version(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
  } catch {
    return 'unknown';
  }
}

/**
 * The `geoplane` command with every subcommand (main.ts runs it; the docs contract test walks it).
 * Commander's own errors (an unknown command or option, a missing argument) throw instead of
 * exiting, so that main.ts exits with the usage code (2); subcommands inherit that setting.
 */
export function buildProgram(): Command {
  const program = new Command()
    .name('geoplane')
    .description(
      'The GeoPlane command line: import files and manage imports, list layers; bootstrap a deployed stack.\n' +
        "Credentials: --url/--api-key, else GEOPLANE_URL/GEOPLANE_API_KEY, else the local host's " +
        'bootstrap.json (GEOPLANE_DATA_DIR or ./.local; its key only for its own URL). Plain http only ' +
        'to loopback. GEOPLANE_CA_FILE names a CA to trust.\n' +
        'Exit codes: 0 ok, 1 the API refused (or an import ended failed), 2 usage, 3 the API is unreachable.',
    )
    .version(version())
    .showHelpAfterError()
    .exitOverride();
  registerImport(program);
  registerImports(program);
  registerLayers(program);
  registerBootstrap(program);
  return program;
}
