/** Starting a seed / reseed / truncate job: layers by public id, a zoom range, an optional bbox. */
import { useState } from 'preact/hooks';
import type { operations } from '#client/api-types.ts';
import { allOf, api, call } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { ErrorNote, Field, issueFor, SelectInput, TextInput } from '#console/components/forms.tsx';
import { JOBS, type Job } from './job-list.tsx';

type JobInput = operations['createTileCacheJob']['requestBody']['content']['application/json'];

const TYPES = allOf<JobInput['type']>({ seed: true, reseed: true, truncate: true });
const TYPE_HINT: Record<JobInput['type'], string> = {
  seed: 'renders the tiles not stored yet',
  reseed: 'renders every tile again',
  truncate: 'removes stored tiles',
};

/** Every enabled layer's public id (the layers a job names), read page by page. */
function useLayerIds(workspace: string) {
  return useLoad(async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const list = await call(
        api.GET('/api/v1/workspaces/{workspace}/layers', {
          params: { path: { workspace }, query: { limit: 1000, ...(cursor ? { cursor } : {}) } },
        }),
      );
      for (const layer of list.layers) if (layer.enabled) ids.push(layer.public_id);
      cursor = list.next_cursor ?? undefined;
      if (!cursor) break;
    }
    return ids.sort();
  }, [workspace]);
}

export function StartJob({
  workspace,
  busy,
  onStarted,
}: {
  workspace: string;
  busy: boolean;
  onStarted: (job: Job) => void;
}) {
  const layerIds = useLayerIds(workspace);
  const [type, setType] = useState<JobInput['type']>('seed');
  const [layers, setLayers] = useState<string[]>([]);
  const [zoomMin, setZoomMin] = useState('0');
  const [zoomMax, setZoomMax] = useState('');
  const [bbox, setBbox] = useState('');
  const start = useAction(async (event: Event) => {
    event.preventDefault();
    const box = bbox.trim()
      ? bbox
          .split(',')
          .map((part) => part.trim())
          .map(Number)
      : undefined;
    const body: JobInput = {
      type,
      ...(layers.length ? { layers } : {}),
      ...(zoomMin.trim() ? { zoom_min: Number(zoomMin) } : {}),
      ...(zoomMax.trim() ? { zoom_max: Number(zoomMax) } : {}),
      ...(box ? { bbox: box } : {}),
    };
    onStarted(await call(api.POST(JOBS, { params: { path: { workspace } }, body })));
  });
  return (
    <section aria-labelledby="start-job-heading">
      <h2 id="start-job-heading">Start a job</h2>
      <p>
        A seed or reseed covers at most a million tiles (layers × tiles) and needs the workspace's vector
        tiles and tile cache on; one job runs at a time per workspace.
      </p>
      <form onSubmit={(event) => void start.run(event)}>
        <SelectInput
          label="Job type"
          hint={TYPE_HINT[type]}
          error={issueFor(start.error, 'type')}
          value={type}
          options={TYPES}
          onChange={setType}
        />
        <Field
          label="Layers"
          hint={
            type === 'truncate'
              ? 'Public ids; none selected: the whole workspace, with what deleted layers and earlier generations left.'
              : 'Public ids; none selected: every enabled layer.'
          }
          error={issueFor(start.error, 'layers') ?? layerIds.error}
        >
          {(props) => (
            <select
              {...props}
              multiple
              size={Math.min(Math.max(layerIds.data?.length ?? 0, 2), 8)}
              onChange={(e) => setLayers(Array.from(e.currentTarget.selectedOptions, (o) => o.value))}
            >
              {(layerIds.data ?? []).map((id) => (
                <option key={id} value={id} selected={layers.includes(id)}>
                  {id}
                </option>
              ))}
            </select>
          )}
        </Field>
        <div class="row">
          <TextInput
            label="Zoom from"
            type="number"
            min={0}
            max={24}
            value={zoomMin}
            onInput={setZoomMin}
            error={issueFor(start.error, 'zoom_min')}
          />
          <TextInput
            label="Zoom to"
            hint={type === 'truncate' ? 'Empty: 24.' : 'Required for a seed or reseed (0–24).'}
            type="number"
            min={0}
            max={24}
            value={zoomMax}
            onInput={setZoomMax}
            error={issueFor(start.error, 'zoom_max')}
          />
        </div>
        <TextInput
          label="Bounding box (optional)"
          hint="west,south,east,north in longitude/latitude (CRS84), e.g. 5.9,45.8,10.5,47.8."
          value={bbox}
          onInput={setBbox}
          error={issueFor(start.error, 'bbox')}
        />
        <div class="actions">
          <button type="submit" class="primary" disabled={start.busy || busy}>
            {start.busy ? 'Starting…' : 'Start job'}
          </button>
        </div>
        <ErrorNote error={start.error} />
      </form>
    </section>
  );
}
