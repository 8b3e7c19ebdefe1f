/*
 * The MapLibre style validator's sidecar (ADR 0100): `@maplibre/maplibre-gl-style-spec` built as
 * its own module beside the style bundles (`infra/bundling.ts`), imported by `styles.ts` on the
 * first Mapbox style save. Third-party code only.
 */
export { validateStyleMin } from '@maplibre/maplibre-gl-style-spec';
