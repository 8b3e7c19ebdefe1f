/** An import's plan: the form that edits it (names, fields, CRS, make-valid), or what it says. */
import { useId, useState } from 'preact/hooks';
import { api, call, etag } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, issueFor, TextInput } from '#console/components/forms.tsx';
import type { ImportJob, ImportPlan, LayerPlan } from './import-status.ts';

/** The plan discovery would suggest, for an import that has none yet. */
function planOf(job: ImportJob): ImportPlan {
  if (job.plan) return structuredClone(job.plan);
  return {
    layers: (job.discovery?.layers ?? []).map((layer) => ({
      source_layer: layer.name,
      public_id: layer.name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 64) || 'layer',
      title: layer.name,
      enabled: true,
      public: false,
      fields: layer.fields.map((f) => ({
        source: f.name,
        target: f.name.toLowerCase().replace(/[^a-z0-9_]+/g, '_'),
        include: true,
      })),
    })),
  };
}

type Srids = Record<number, { source: string; target: string }>;

export function PlanForm({
  workspace,
  job,
  onSaved,
}: {
  workspace: string;
  job: ImportJob;
  onSaved: (job: ImportJob) => void;
}) {
  const formId = useId();
  const [plan, setPlan] = useState<ImportPlan>(() => planOf(job));
  const [srids, setSrids] = useState<Srids>(() =>
    Object.fromEntries(
      planOf(job).layers.map((l, i) => [
        i,
        {
          source: l.source_srid ? String(l.source_srid) : '',
          target: l.target_srid ? String(l.target_srid) : '',
        },
      ]),
    ),
  );
  const setLayer = (i: number, patch: Partial<LayerPlan>) =>
    setPlan((p) => ({ layers: p.layers.map((l, k) => (k === i ? { ...l, ...patch } : l)) }));
  const setField = (i: number, j: number, patch: Partial<LayerPlan['fields'][number]>) =>
    setPlan((p) => ({
      layers: p.layers.map((l, k) =>
        k === i ? { ...l, fields: l.fields.map((f, m) => (m === j ? { ...f, ...patch } : f)) } : l,
      ),
    }));
  const save = useAction(async (event: Event) => {
    event.preventDefault();
    const body: ImportPlan = {
      layers: plan.layers.map((layer, i) => {
        const { source_srid: _s, target_srid: _t, ...rest } = layer;
        const source = srids[i]?.source.trim();
        const target = srids[i]?.target.trim();
        return {
          ...rest,
          ...(source ? { source_srid: Number(source) } : {}),
          ...(target ? { target_srid: Number(target) } : {}),
        };
      }),
    };
    const updated = await call(
      api.PUT('/api/v1/workspaces/{workspace}/imports/{import}/plan', {
        params: { path: { workspace, import: job.id }, header: { 'If-Match': etag(job.version) } },
        body,
      }),
    );
    onSaved(updated);
  });
  return (
    <form onSubmit={(event) => void save.run(event)} aria-describedby={`${formId}-about`}>
      <p id={`${formId}-about`}>
        Rename layers and columns, leave fields out, set the CRS. Saving loads the data again with the plan.
      </p>
      {plan.layers.map((layer, i) => {
        const found = job.discovery?.layers.find((l) => l.name === layer.source_layer);
        const at = `body.layers.${i}`;
        return (
          <fieldset class="layer-plan" key={layer.source_layer}>
            <legend>Layer {layer.source_layer}</legend>
            <div class="plan-grid">
              <TextInput
                label="Public id"
                hint="The layer's name in the service's URLs."
                error={issueFor(save.error, `${at}.public_id`)}
                required
                value={layer.public_id}
                onInput={(text) => setLayer(i, { public_id: text })}
              />
              <TextInput
                label="Title"
                error={issueFor(save.error, `${at}.title`)}
                value={layer.title ?? ''}
                onInput={(text) => setLayer(i, { title: text })}
              />
              <TextInput
                label="Source SRID"
                hint={
                  found?.srid
                    ? `Discovered: EPSG:${found.srid}; empty keeps it.`
                    : 'Unknown in the file: give it.'
                }
                error={issueFor(save.error, `${at}.source_srid`)}
                inputMode="numeric"
                pattern="[0-9]*"
                value={srids[i]?.source ?? ''}
                onInput={(text) => {
                  const source = text;
                  setSrids((s) => ({ ...s, [i]: { source, target: s[i]?.target ?? '' } }));
                }}
              />
              <TextInput
                label="Target SRID"
                hint="Reprojects into it; empty keeps the source CRS."
                error={issueFor(save.error, `${at}.target_srid`)}
                inputMode="numeric"
                pattern="[0-9]*"
                value={srids[i]?.target ?? ''}
                onInput={(text) => {
                  const target = text;
                  setSrids((s) => ({ ...s, [i]: { source: s[i]?.source ?? '', target } }));
                }}
              />
            </div>
            <div class="row">
              <span class="check">
                <input
                  id={`${formId}-${i}-valid`}
                  type="checkbox"
                  checked={layer.make_valid ?? false}
                  onChange={(e) => setLayer(i, { make_valid: e.currentTarget.checked })}
                />
                <label for={`${formId}-${i}-valid`}>Make geometries valid</label>
              </span>
              <span class="check">
                <input
                  id={`${formId}-${i}-enabled`}
                  type="checkbox"
                  checked={layer.enabled}
                  onChange={(e) => setLayer(i, { enabled: e.currentTarget.checked })}
                />
                <label for={`${formId}-${i}-enabled`}>Enabled when published</label>
              </span>
              <span class="check">
                <input
                  id={`${formId}-${i}-public`}
                  type="checkbox"
                  checked={layer.public}
                  onChange={(e) => setLayer(i, { public: e.currentTarget.checked })}
                />
                <label for={`${formId}-${i}-public`}>Public</label>
              </span>
            </div>
            <table class="plan-fields">
              <caption>Fields of {layer.source_layer}</caption>
              <thead>
                <tr>
                  <th scope="col" id={`${formId}-${i}-h-source`}>
                    Field in the file
                  </th>
                  <th scope="col">Type</th>
                  <th scope="col" id={`${formId}-${i}-h-include`}>
                    Include
                  </th>
                  <th scope="col" id={`${formId}-${i}-h-target`}>
                    Column
                  </th>
                </tr>
              </thead>
              <tbody>
                {layer.fields.map((field, j) => {
                  const rowId = `${formId}-${i}-f${j}`;
                  return (
                    <tr key={field.source}>
                      <td id={rowId}>{field.source}</td>
                      <td>{field.type ?? found?.fields.find((f) => f.name === field.source)?.type ?? ''}</td>
                      <td>
                        <input
                          type="checkbox"
                          aria-labelledby={`${formId}-${i}-h-include ${rowId}`}
                          checked={field.include}
                          onChange={(e) => setField(i, j, { include: e.currentTarget.checked })}
                        />
                      </td>
                      <td>
                        <input
                          type="text"
                          aria-labelledby={`${formId}-${i}-h-target ${rowId}`}
                          aria-invalid={issueFor(save.error, `${at}.fields.${j}`) ? true : undefined}
                          required={field.include}
                          disabled={!field.include}
                          value={field.target}
                          onInput={(e) => setField(i, j, { target: e.currentTarget.value })}
                        />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </fieldset>
        );
      })}
      <button type="submit" class="primary" disabled={save.busy}>
        Save plan and reload
      </button>
      <ErrorNote error={save.error} />
    </form>
  );
}

/** What a plan that can no longer change says: each layer's name, fields, CRS and make-valid. */
export function PlanSummary({ plan }: { plan: ImportPlan }) {
  return (
    <>
      <p>The plan can change while the import awaits a plan, is ready to publish or failed.</p>
      <ul>
        {plan.layers.map((l) => (
          <li key={l.public_id}>
            {l.source_layer} → {l.target ? `${l.target.mode === 'replace' ? 'replaces' : 'appends to'} ` : ''}
            <strong>{l.public_id}</strong>:{' '}
            {l.fields
              .filter((f) => f.include)
              .map((f) => f.target)
              .join(', ')}
            {l.target_srid ? ` (EPSG:${l.target_srid})` : ''}
            {l.make_valid ? ', made valid' : ''}
          </li>
        ))}
      </ul>
    </>
  );
}
