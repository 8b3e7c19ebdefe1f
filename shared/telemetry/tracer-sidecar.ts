/*
 * The tracer's sidecar (ADR 0100): Powertools Tracer and the X-Ray SDK under it (~115 KB minified)
 * built as their own module beside every bundle (`infra/bundling.ts`), imported by `tracer.ts`
 * only where tracing is on. Third-party code only.
 */
export { Tracer } from '@aws-lambda-powertools/tracer';
