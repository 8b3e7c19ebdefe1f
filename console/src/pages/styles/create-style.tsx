/** Creating a style (SLD 1.0/1.1, SE 1.1 or MapLibre JSON, typed or loaded from a file). */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, call } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, FormSection } from '#console/components/forms.tsx';
import { paths } from '#console/routes.ts';
import { type Draft, emptyDraft, inputOf, isBodyError, StyleFields } from './style-fields.tsx';

export function CreateStyle({ workspace }: { workspace: string }) {
  const { route } = useLocation();
  const [draft, setDraftState] = useState<Draft>(emptyDraft);
  const setDraft = (update: Partial<Draft>) => setDraftState((d) => ({ ...d, ...update }));
  const create = useAction(async (event: Event) => {
    event.preventDefault();
    const created = await call(
      api.POST('/api/v1/workspaces/{workspace}/styles', {
        params: { path: { workspace } },
        body: inputOf(draft),
      }),
    );
    route(`${paths.styles(workspace)}?style=${encodeURIComponent(created.name)}`);
  });
  return (
    <FormSection id="create-heading" heading="Create a style" onSubmit={create.run}>
      <StyleFields draft={draft} setDraft={setDraft} error={create.error} />
      <button type="submit" class="primary" disabled={create.busy}>
        Create style
      </button>
      {isBodyError(create.error) ? null : <ErrorNote error={create.error} />}
    </FormSection>
  );
}
