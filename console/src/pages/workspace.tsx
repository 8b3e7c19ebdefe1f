/** One workspace: describe, rename (If-Match), delete — with the plan shown before a recursive delete. */
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, call, etag } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { Confirm, DeleteSection } from '#console/components/dialogs.tsx';
import { ErrorNote, FormSection, issueFor, SaveActions, TextInput } from '#console/components/forms.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { type DeletionPlan, DeletionPlanView } from '#console/deletion-plan.tsx';
import { paths } from '#console/routes.ts';
import { load as reloadSession } from '#console/session.ts';
import { WorkspaceOgcApi } from './ogc-links.tsx';
import { WorkspaceSummary } from './workspace-summary.tsx';

export function WorkspacePage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const workspace = params.workspace as string;
  const ws = useLoad(
    () => call(api.GET('/api/v1/workspaces/{workspace}', { params: { path: { workspace } } })),
    [workspace],
  );
  const [name, setName] = useState<string>();
  const [description, setDescription] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const [plan, setPlan] = useState<DeletionPlan>();
  const [confirmEmpty, setConfirmEmpty] = useState(false);

  const save = useAction(async (event: Event) => {
    event.preventDefault();
    if (!ws.data) return;
    // A notice of an earlier save must not stand beside this one's error.
    setSaved(undefined);
    const updated = await call(
      api.PUT('/api/v1/workspaces/{workspace}', {
        params: { path: { workspace }, header: { 'If-Match': etag(ws.data.version) } },
        body: {
          ...(name !== undefined && name !== ws.data.name ? { name: name.trim() } : {}),
          ...(description !== undefined ? { description } : {}),
        },
      }),
    );
    // The saved workspace is read before the edits go, so the form never flashes the old values.
    if (updated.name !== workspace) {
      await reloadSession();
      route(paths.workspace(updated.name), true);
    } else await ws.reload();
    setName(undefined);
    setDescription(undefined);
    setSaved(`Saved (version ${updated.version}).`);
  });

  // First ask without recurse: an empty workspace goes at once, otherwise the API answers the plan.
  const remove = useAction(async (recurse: boolean) => {
    try {
      const result = await api.DELETE('/api/v1/workspaces/{workspace}', {
        params: { path: { workspace }, query: recurse ? { recurse: 'true' } : {} },
      });
      if (result.response.status === 409 && !recurse) {
        const body = result.error as { recurse_required?: boolean; plan?: DeletionPlan };
        if (body?.recurse_required && body.plan) {
          setPlan(body.plan);
          return;
        }
      }
      const operation = await call(Promise.resolve(result));
      setPlan(undefined);
      setConfirmEmpty(false);
      await reloadSession();
      if (operation && typeof operation === 'object' && 'id' in operation)
        route(paths.deletion(operation.id));
      else route(paths.workspaces);
    } catch (error) {
      setPlan(undefined);
      setConfirmEmpty(false);
      throw error;
    }
  });

  return (
    <>
      <PageTitle title={`Workspace ${workspace}`}>Workspace {workspace}</PageTitle>
      <ErrorNote error={ws.error} />
      {ws.data ? (
        <>
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{ws.data.id}</code>
            </dd>
            <dt>Version</dt>
            <dd>{ws.data.version}</dd>
            <dt>Created</dt>
            <dd>{new Date(ws.data.created_at).toLocaleString()}</dd>
          </dl>
          <WorkspaceSummary workspace={ws.data.name} />
          <WorkspaceOgcApi workspace={ws.data.name} />
          <FormSection id="edit-heading" heading="Rename or describe" onSubmit={save.run}>
            <TextInput
              label="Name"
              error={issueFor(save.error, 'name')}
              required
              value={name ?? ws.data?.name}
              onInput={setName}
            />
            <TextInput
              label="Description"
              hint="Empty clears it."
              error={issueFor(save.error, 'description')}
              value={description ?? ws.data?.description ?? ''}
              onInput={setDescription}
            />
            <SaveActions action={save} saved={saved} />
          </FormSection>
          <DeleteSection
            label="Delete workspace…"
            busy={remove.busy}
            error={remove.error}
            onDelete={() => setConfirmEmpty(true)}
          >
            <p>
              An empty workspace is deleted at once; otherwise the console shows what a recursive deletion
              removes first.
            </p>
          </DeleteSection>
          <Confirm
            open={confirmEmpty || plan !== undefined}
            title={
              plan ? `Delete workspace ${workspace} and everything in it?` : `Delete workspace ${workspace}?`
            }
            confirmLabel={plan ? 'Delete everything' : 'Delete'}
            danger
            onConfirm={() => void remove.run(plan !== undefined)}
            onCancel={() => {
              setPlan(undefined);
              setConfirmEmpty(false);
            }}
          >
            {plan ? (
              <>
                <DeletionPlanView plan={plan} />
                <p>
                  The workspace is hidden at once; a deletion you can follow removes the rest, its API keys,
                  claim mappings and settings last.
                </p>
              </>
            ) : (
              <>
                <p>Everything in the workspace goes with it:</p>
                <ul>
                  <li>its services, with their layers and SQL views, and its layer groups;</li>
                  <li>its styles, style assets and mosaics;</li>
                  <li>its API keys, claim mappings and settings.</li>
                </ul>
                <p>
                  If it still holds services, layers, layer groups, styles or style assets, nothing is deleted
                  yet: this dialog then lists them, as the deletion plan names them, and asks once more.
                </p>
              </>
            )}
          </Confirm>
        </>
      ) : null}
    </>
  );
}
