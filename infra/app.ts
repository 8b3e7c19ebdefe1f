import { CONSOLE_DIST, ensureConsoleBuilt } from '../console/build.ts';
import { createGeoPlaneApp } from './stacks/geoplane-stack.ts';

// CDK entry (`cdk.json`: `npx tsx infra/app.ts`). The CLI passes the context (stage settings) and
// the output directory through the environment; the app synthesizes when the process exits.
// The console is built first (only when its sources changed): the stack packages console/dist.
await ensureConsoleBuilt();
createGeoPlaneApp({ consoleDist: CONSOLE_DIST });
