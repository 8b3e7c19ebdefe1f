/** Harvesting the GeoTIFF/COG sources under a mosaic's root, the answer shown. */
import { useState } from 'preact/hooks';
import type { operations } from '#client/api-types.ts';
import { api, call, type Schemas } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, Field, issueFor } from '#console/components/forms.tsx';

type Harvest = Schemas['MosaicHarvest'];
type HarvestInput = operations['harvestMosaicGranules']['requestBody']['content']['application/json'];

export function HarvestForm({
  workspace,
  service,
  onHarvested,
}: {
  workspace: string;
  service: string;
  onHarvested: () => void;
}) {
  const [pattern, setPattern] = useState('');
  const [uris, setUris] = useState('');
  const [result, setResult] = useState<Harvest>();
  const harvest = useAction(async (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    const sources = uris
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const body: HarvestInput = {
      ...(pattern.trim() ? { pattern: pattern.trim() } : {}),
      ...(sources.length ? { uris: sources } : {}),
    };
    setResult(
      await call(
        api.POST('/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest', {
          params: { path: { workspace, service } },
          body,
        }),
      ),
    );
    onHarvested();
  });
  return (
    <section aria-labelledby="harvest-heading">
      <h2 id="harvest-heading">Harvest</h2>
      <p>
        Reads the headers of GeoTIFF/COG sources under the root and adds them together as a new generation (at
        most 90 at a time; sources already in the mosaic are skipped). Give a pattern or sources, not both.
      </p>
      <form onSubmit={(event) => void harvest.run(event)}>
        <Field
          label="Pattern"
          hint="A glob under the root; empty (with no sources) means **/*.{tif,tiff,TIF,TIFF}."
          error={issueFor(harvest.error, 'body.pattern')}
        >
          {(props) => <input {...props} value={pattern} onInput={(e) => setPattern(e.currentTarget.value)} />}
        </Field>
        <Field
          label="Sources"
          hint="One per line: a path relative to the root, or a URI inside it."
          error={issueFor(harvest.error, 'body.uris')}
        >
          {(props) => (
            <textarea {...props} rows={3} value={uris} onInput={(e) => setUris(e.currentTarget.value)} />
          )}
        </Field>
        <button type="submit" class="primary" disabled={harvest.busy}>
          {harvest.busy ? 'Harvesting…' : 'Harvest'}
        </button>
        <ErrorNote error={harvest.error} />
      </form>
      {result ? (
        <div class="notice" role="status">
          <p>
            Generation {result.generation}: {result.granule_count} granules; {result.added.length} added,{' '}
            {result.skipped.length} skipped.
          </p>
          {result.added.length ? (
            <>
              <p>Added:</p>
              <ul>
                {result.added.map((g) => (
                  <li key={g.id}>
                    <code>{g.source_uri}</code>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {result.skipped.length ? (
            <>
              <p>Skipped (already in the mosaic):</p>
              <ul>
                {result.skipped.map((uri) => (
                  <li key={uri}>
                    <code>{uri}</code>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
