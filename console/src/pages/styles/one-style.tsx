/**
 * One style, with `?style=<name>`: its facts, editing it (If-Match; the API's refusal of the
 * document shown beside the editor, a concurrent save offered to load) and deleting it.
 */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ConsoleApiError, call, etag } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { Confirm, DeleteSection, useConfirmed } from '#console/components/dialogs.tsx';
import { ErrorNote, FormSection, Notice } from '#console/components/forms.tsx';
import { PageTitle, TimeFact } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import {
  type Draft,
  draftOf,
  formatLabel,
  inputOf,
  isBodyError,
  type Style,
  StyleFields,
} from './style-fields.tsx';

export function OneStyle({ workspace, name }: { workspace: string; name: string }) {
  const { route } = useLocation();
  const style = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/styles/{style}', {
          params: { path: { workspace, style: name } },
        }),
      ),
    [workspace, name],
  );
  const [edits, setEdits] = useState<Partial<Draft>>({});
  const [saved, setSaved] = useState<string>();
  const current = style.data;
  const draft: Draft | undefined = current ? { ...draftOf(current), ...edits } : undefined;

  const save = useAction(async (event: Event) => {
    event.preventDefault();
    if (!current || !draft) return;
    setSaved(undefined);
    const updated = await call(
      api.PUT('/api/v1/workspaces/{workspace}/styles/{style}', {
        params: {
          path: { workspace, style: current.name },
          header: { 'If-Match': etag(current.version) },
        },
        body: inputOf(draft),
      }),
    );
    setEdits({});
    setSaved(`Saved (version ${updated.version}).`);
    if (updated.name !== current.name)
      route(`${paths.styles(workspace)}?style=${encodeURIComponent(updated.name)}`, true);
    else await style.reload();
  });

  const remove = useConfirmed(async (style: Style) => {
    await call(
      api.DELETE('/api/v1/workspaces/{workspace}/styles/{style}', {
        params: {
          path: { workspace, style: style.name },
          header: { 'If-Match': etag(style.version) },
        },
      }),
    );
    route(paths.styles(workspace));
  });

  return (
    <>
      <PageTitle title={`Style ${name} · ${workspace}`}>Style {name}</PageTitle>
      <p>
        <a href={paths.styles(workspace)}>All styles of {workspace}</a>
      </p>
      <ErrorNote error={style.error} />
      {current && draft ? (
        <>
          <dl class="facts">
            <dt>Format</dt>
            <dd>{formatLabel(current.format)}</dd>
            <dt>Version</dt>
            <dd>{current.version}</dd>
            <dt>Assets used</dt>
            <dd>
              {current.asset_refs.length ? (
                current.asset_refs.map((asset, i) => (
                  <span key={asset}>
                    {i ? ', ' : ''}
                    <code>{asset}</code>
                  </span>
                ))
              ) : (
                <span>none</span>
              )}{' '}
              (<a href={paths.styleAssets(workspace)}>style assets</a>)
            </dd>
            <TimeFact label="Created" at={current.created_at} />
            <TimeFact label="Updated" at={current.updated_at} />
          </dl>
          <FormSection id="edit-heading" heading="Edit" onSubmit={save.run}>
            <StyleFields
              draft={draft}
              setDraft={(update) => setEdits((e) => ({ ...e, ...update }))}
              error={save.error}
            />
            <div class="actions">
              <button type="submit" class="primary" disabled={save.busy}>
                Save style
              </button>
              <button
                type="button"
                disabled={Object.keys(edits).length === 0}
                onClick={() => {
                  setEdits({});
                  save.setError(undefined);
                }}
              >
                Discard changes
              </button>
            </div>
            {isBodyError(save.error) ? null : <ErrorNote error={save.error} />}
            {save.error instanceof ConsoleApiError && save.error.status === 412 ? (
              <p>
                Someone saved this style meanwhile.{' '}
                <button type="button" onClick={() => void style.reload()}>
                  Load their version
                </button>{' '}
                (your edits stay in the form).
              </p>
            ) : null}
            <Notice>{saved}</Notice>
          </FormSection>
          <DeleteSection
            label="Delete style…"
            busy={remove.busy}
            error={remove.error}
            onDelete={() => remove.ask(current)}
          >
            <p>A style that layers use can't be deleted; the API names them.</p>
          </DeleteSection>
          <Confirm {...remove.dialog} title={`Delete style ${current.name}?`} confirmLabel="Delete" danger>
            <p>Its asset references go with it; the assets themselves stay.</p>
          </Confirm>
        </>
      ) : style.loading ? (
        <p>Loading…</p>
      ) : null}
    </>
  );
}
