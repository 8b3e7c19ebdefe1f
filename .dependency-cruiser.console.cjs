/**
 * The console's layering (issue #28): `console/src` talks to the API through the generated client
 * only (`client/`, ADR 0096) and imports nothing of the server, the host, the CLI, the bench or the
 * tests. Its TSX is parsed by acorn after Babel strips the types and JSX
 * (`.dependency-cruiser.babel.json`): swc, the main configuration's parser, reads TypeScript without
 * JSX there. Babel drops type-only imports, so only value imports are checked here; the console's
 * `tsc` project (console/tsconfig.json) includes no server file, which covers types.
 */
const base = require('./.dependency-cruiser.cjs');

const kept = new Set(['no-circular', 'not-to-unresolvable', 'client-by-name']);

/** The build's virtual modules (console/build.ts and vite.config.ts make `virtual:operations`). */
const VIRTUAL = '^virtual:';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...base.forbidden
      .filter((rule) => kept.has(rule.name))
      .map((rule) =>
        rule.name === 'not-to-unresolvable' ? { ...rule, to: { ...rule.to, pathNot: VIRTUAL } } : rule,
      ),
    {
      name: 'console-through-the-client',
      severity: 'error',
      comment: 'The console reads the API through the generated client only.',
      from: { path: '^console/src/' },
      to: { path: '^(shared|functions|infra|cli|bench|test)/' },
    },
    {
      name: 'console-rooms-by-name',
      severity: 'error',
      comment:
        'An import out of a console room (components/, pages/) names what it reaches (#console/…, #client/…, package.json `imports`) instead of climbing to it with ../; inside a room, ./ and ../ stay (issue #28).',
      from: { path: '^console/src/(components|pages)/' },
      to: {
        path: '^(console/src/|client/)',
        pathNot: '^console/src/$1/',
        dependencyTypesNot: ['aliased-subpath-import'],
      },
    },
  ],
  options: {
    ...base.options,
    parser: 'acorn',
    babelConfig: { fileName: require('node:path').join(__dirname, '.dependency-cruiser.babel.json') },
    enhancedResolveOptions: {
      ...base.options.enhancedResolveOptions,
      extensions: [...base.options.enhancedResolveOptions.extensions, '.tsx'],
    },
  },
};
