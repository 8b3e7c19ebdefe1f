/** Workspaces: the paged list (super_admin) or the caller's own, and creating one. */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, call } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { ErrorNote, FormSection, issueFor, TextInput } from '#console/components/forms.tsx';
import { PagedSection, Table, usePagedList } from '#console/components/lists.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { useSession } from '#console/session.ts';

function CreateWorkspace() {
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useAction(async (event: Event) => {
    event.preventDefault();
    const created = await call(
      api.POST('/api/v1/workspaces', {
        body: { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
      }),
    );
    route(paths.workspace(created.name));
  });
  return (
    <FormSection id="create-heading" heading="Create a workspace" onSubmit={create.run}>
      <TextInput
        label="Name"
        hint="Letters, digits, '-' and '_'; it names the workspace in every URL."
        error={issueFor(create.error, 'name')}
        required
        value={name}
        onInput={setName}
      />
      <TextInput
        label="Description"
        error={issueFor(create.error, 'description')}
        value={description}
        onInput={setDescription}
      />
      <button type="submit" class="primary" disabled={create.busy}>
        Create workspace
      </button>
      <ErrorNote error={create.error} />
    </FormSection>
  );
}

function AllWorkspaces() {
  const list = usePagedList(
    (page) => call(api.GET('/api/v1/workspaces', { params: { query: { limit: 50, ...page } } })),
    [],
  );
  return (
    <PagedSection
      id="list-heading"
      heading="All workspaces"
      list={list}
      items={(data) => data.workspaces}
      columns={['Name', 'Description', 'Updated']}
      empty={<p>No workspaces yet.</p>}
    >
      {(w) => (
        <tr key={w.id}>
          <td>
            <a href={paths.workspace(w.name)}>{w.name}</a>
          </td>
          <td>{w.description ?? ''}</td>
          <td>{new Date(w.updated_at).toLocaleString()}</td>
        </tr>
      )}
    </PagedSection>
  );
}

export function WorkspacesPage() {
  const me = useSession();
  if (!me) return null;
  return (
    <>
      <PageTitle title="Workspaces">Workspaces</PageTitle>
      {me.super_admin ? (
        <>
          <CreateWorkspace />
          <AllWorkspaces />
        </>
      ) : (
        <section aria-labelledby="mine-heading">
          <h2 id="mine-heading">Your workspaces</h2>
          {me.workspaces.length === 0 ? (
            <p>You have no role in any workspace yet; an administrator can give you one.</p>
          ) : (
            <Table columns={['Name', 'Your role']}>
              {me.workspaces.map((w) => (
                <tr key={w.id}>
                  <td>
                    <a href={paths.workspace(w.name)}>{w.name}</a>
                  </td>
                  <td>{w.role}</td>
                </tr>
              ))}
            </Table>
          )}
        </section>
      )}
    </>
  );
}
