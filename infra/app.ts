import { createGeoPlaneApp } from './stacks/geoplane-stack.ts';

// CDK entry (`cdk.json`: `npx tsx infra/app.ts`). The CLI passes the context (stage settings) and
// the output directory through the environment; the app synthesizes when the process exits.
createGeoPlaneApp();
