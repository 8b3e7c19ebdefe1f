/**
 * The layering of DESIGN §3 and CONVENTIONS "Layers and wiring" as rules (ADR 0079), checked by
 * `npm run lint` over `shared/`, `functions/`, `infra/`, `cli/` and `bench/` (the console's TSX has a
 * configuration of its own, `.dependency-cruiser.console.cjs`). Imports point down only:
 *
 *   functions ─▶ entry ─▶ wiring ─▶ http ─▶ auth ─▶ api ─▶ domain ◀─ store, datasources, workflows, platform
 *                            └──────────────────────────────────────────▶ (the adapters)
 *   config, log and telemetry at the bottom (used by all but the domain and the route table).
 *
 * Type-only imports count like any other: a type that points up is an upward import too.
 * TypeScript is parsed by swc (dependency-cruiser's TypeScript support needs the compiler API,
 * which the native TypeScript 7 doesn't ship).
 */

/** The adapter rooms: they implement the domain's ports and know nothing above the domain. */
const ADAPTERS = '^shared/(store|datasources|platform|workflows)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module reaches itself through its imports.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import resolves (a rule over an import it cannot resolve would check nothing).',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'shared-not-to-functions',
      severity: 'error',
      comment:
        'functions/ holds entry points only, and shared/entry their handler factories: nothing else imports them.',
      from: { path: '^shared/([^/]+)/' },
      to: { path: '^(functions|shared/entry)/', pathNot: '^shared/$1/' },
    },
    {
      name: 'only-functions-use-wiring',
      severity: 'error',
      comment:
        'shared/wiring is the composition root: only entry points, their handler factories (shared/entry) and the hosts and tests take ports from it.',
      from: { path: '^shared/', pathNot: '^shared/(wiring|entry)/' },
      to: { path: '^shared/wiring/' },
    },
    {
      name: 'functions-not-to-adapters',
      severity: 'error',
      comment:
        'Handlers and their factories (shared/entry) take their ports from shared/wiring, never from store, datasources, platform or a workflow adapter. ' +
        "shared/workflows/tasks.ts is the workflow tasks' edge (task input, budgets, failure → retry), like http for the API.",
      from: { path: '^(functions|shared/entry)/' },
      to: { path: ADAPTERS, pathNot: '^shared/workflows/tasks[.]ts$' },
    },
    {
      name: 'edge-not-to-adapters',
      severity: 'error',
      comment: 'http and auth receive ports; they import no repository, data source or workflow adapter.',
      from: { path: '^shared/(http|auth)/' },
      to: { path: ADAPTERS },
    },
    {
      name: 'auth-not-to-http',
      severity: 'error',
      comment: "http builds on auth (it maps auth's errors), never the other way round.",
      from: { path: '^shared/auth/' },
      to: { path: '^shared/http/' },
    },
    {
      name: 'api-not-up',
      severity: 'error',
      comment: 'The route table (operations, schemas, presenters) builds on the domain and config only.',
      from: { path: '^shared/api/' },
      to: { path: '^shared/(?!api/|domain/|config/)' },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'The domain imports only the domain: no store, no http, no adapter, no config; it declares the ports it needs.',
      from: { path: '^shared/domain/' },
      to: { path: '^(shared/(?!domain/)|functions/|infra/)' },
    },
    {
      name: 'domain-no-platform-packages',
      severity: 'error',
      comment: 'No AWS SDK, no HTTP or Lambda types, no database driver in the domain.',
      from: { path: '^shared/domain/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        path: '(^|/)node_modules/(@aws-sdk/|@smithy/|@middy/|@aws-lambda-powertools/|@types/aws-lambda|aws-lambda|pg/|pg-|libpg-query|jose)',
      },
    },
    {
      name: 'adapters-only-down',
      severity: 'error',
      comment:
        'An adapter room imports itself, the domain, config, log and telemetry only: not the edge, the route table, the wiring nor another adapter room.',
      from: { path: '^shared/(store|datasources|platform|workflows)/' },
      to: {
        path: '^(shared/|functions/)',
        pathNot: ['^shared/$1/', '^shared/(domain|config|log|telemetry)/'],
      },
    },
    {
      name: 'log-at-the-bottom',
      severity: 'error',
      comment:
        'shared/log is the logger (ADR 0090), shared/telemetry the tracer and the metrics (ADR 0092): every room but the domain and the route table may use them; the logger imports nothing of the project, telemetry the logger only.',
      from: { path: '^shared/(log|telemetry)/' },
      to: { path: '^(shared/|functions/)', pathNot: ['^shared/$1/', '^shared/log/'] },
    },
    {
      name: 'rooms-by-name',
      severity: 'error',
      comment:
        'An import into another room of shared/ names the room (#domain/…, package.json `imports`) instead of climbing to it with ../ (issue #28).',
      from: { path: '^(shared/([^/]+)/|functions/|infra/|cli/|bench/|test/)' },
      to: { path: '^shared/', pathNot: '^shared/$2/', dependencyTypesNot: ['aliased-subpath-import'] },
    },
    {
      name: 'client-by-name',
      severity: 'error',
      comment:
        'The CLI, the host, the CDK app, the bench and the console name the generated client (#client/…) instead of climbing to it with ../ (issue #28; the console runs it in its own cruise).',
      from: { path: '^((infra|cli|bench)/|console/src/[^/]+$)' },
      to: { path: '^client/', dependencyTypesNot: ['aliased-subpath-import'] },
    },
    {
      name: 'product-not-to-tools',
      severity: 'error',
      comment:
        'Product code (shared, functions, infra, the CLI, the client) never imports the tests or the bench; they import it.',
      from: { path: '^(shared|functions|infra|cli|client)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'lambda-code-stays-inside',
      severity: 'error',
      comment:
        'shared/ and functions/ are what the Lambdas run: they import no host, CDK, CLI, console, client or build script.',
      from: { path: '^(shared|functions)/' },
      to: { path: '^(infra|cli|bench|console|client|test)/' },
    },
    {
      name: 'cli-through-the-client',
      severity: 'error',
      comment:
        'The CLI talks to the API through the generated client (ADR 0096); only `geoplane bootstrap`, which runs before any key exists, writes the table itself.',
      from: { path: '^cli/', pathNot: '^cli/commands/bootstrap[.]ts$' },
      to: { path: '^(shared|functions|infra)/' },
    },
    {
      name: 'nothing-imports-the-local-host',
      severity: 'error',
      comment:
        'infra/local is the local host: nothing of the product imports it (the tests and the bench start it).',
      from: { path: '^(shared|functions|cli|client|infra/(?!local/))' },
      to: { path: '^infra/local/' },
    },
    {
      name: 'cdk-reads-definitions',
      severity: 'error',
      comment:
        'CDK (infra/app.ts, stacks, constructs) reads definitions (the route table, the table layout, the ASL), never the composition root or a running adapter.',
      from: { path: '^infra/(app[.]ts$|stacks/|constructs/)' },
      to: { path: '^shared/(wiring|entry|platform|workflows)/' },
    },
    {
      name: 'config-at-the-bottom',
      severity: 'error',
      comment: 'shared/config parses the environment; it imports nothing of the project.',
      from: { path: '^shared/config/' },
      to: { path: '^(shared/(?!config/)|functions/)' },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['^node_modules/'] },
    moduleSystems: ['es6', 'cjs'],
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
