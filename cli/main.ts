import { CommanderError } from 'commander';
import { EXIT } from './config.ts';
import { buildProgram } from './program.ts';

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  // Commander has printed its message (and the help): --help and --version end 0, the rest is usage.
  if (!(error instanceof CommanderError)) throw error;
  process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
