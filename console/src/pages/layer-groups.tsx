/**
 * Layer groups of a workspace: the paged list, creating one from the workspace's layers (and
 * other groups), editing it (If-Match) and deleting it (If-Match).
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, call, etag, type Schemas } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { Confirm, useConfirmed } from '#console/components/dialogs.tsx';
import { ErrorNote, Field, issueFor, Notice, SubmitActions, TextInput } from '#console/components/forms.tsx';
import { PagedTable, RowError, usePagedList } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import './services.css';

type Group = Schemas['LayerGroup'];
type Member = Group['members'][number];

/** Pages of 1000 read per list when gathering what a group can hold. */
const MAX_PAGES = 10;

interface Candidate {
  resource: string;
  label: string;
  kind: 'layer' | 'group';
}

async function allPages<T>(load: (cursor?: string) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await load(cursor);
    items.push(...page.items);
    cursor = page.next;
    pages++;
  } while (cursor && pages < MAX_PAGES);
  return items;
}

/** Every layer of every service of the workspace, and its groups: what a group can hold. */
async function candidatesOf(workspace: string): Promise<Candidate[]> {
  const services = await allPages(async (cursor) => {
    const page = await call(
      api.GET('/api/v1/workspaces/{workspace}/services', {
        params: { path: { workspace }, query: { limit: 1000, ...(cursor ? { cursor } : {}) } },
      }),
    );
    return { items: page.services, next: page.next_cursor };
  });
  const layers = await Promise.all(
    services.map((service) =>
      allPages(async (cursor) => {
        const page = await call(
          api.GET('/api/v1/workspaces/{workspace}/services/{service}/layers', {
            params: {
              path: { workspace, service: service.id },
              query: { limit: 1000, ...(cursor ? { cursor } : {}) },
            },
          }),
        );
        return {
          items: page.layers.map(
            (layer): Candidate => ({
              resource: layer.public_id,
              label: `${layer.public_id} — ${layer.title} (${service.name}${layer.enabled ? '' : ', draft'})`,
              kind: 'layer',
            }),
          ),
          next: page.next_cursor,
        };
      }),
    ),
  );
  const groups = await allPages(async (cursor) => {
    const page = await call(
      api.GET('/api/v1/workspaces/{workspace}/layer-groups', {
        params: { path: { workspace }, query: { limit: 1000, ...(cursor ? { cursor } : {}) } },
      }),
    );
    return {
      items: page.layer_groups.map(
        (group): Candidate => ({
          resource: group.public_id,
          label: `${group.public_id} — ${group.title}`,
          kind: 'group',
        }),
      ),
      next: page.next_cursor,
    };
  });
  return [...layers.flat().sort((a, b) => a.resource.localeCompare(b.resource)), ...groups];
}

function GroupForm({
  workspace,
  group,
  candidates,
  onSaved,
  onCancel,
}: {
  workspace: string;
  group?: Group;
  candidates: Candidate[];
  onSaved: (group: Group) => void;
  onCancel?: () => void;
}) {
  const [publicId, setPublicId] = useState(group?.public_id ?? '');
  const [title, setTitle] = useState(group?.title ?? '');
  // In drawing order: members kept from the group first, newly picked ones after.
  const [members, setMembers] = useState<Member[]>(group?.members ?? []);
  const save = useAction(async (event: Event) => {
    event.preventDefault();
    const body = { public_id: publicId.trim(), ...(title.trim() ? { title: title.trim() } : {}), members };
    const saved = group
      ? await call(
          api.PUT('/api/v1/workspaces/{workspace}/layer-groups/{group}', {
            params: { path: { workspace, group: group.id }, header: { 'If-Match': etag(group.version) } },
            body,
          }),
        )
      : await call(
          api.POST('/api/v1/workspaces/{workspace}/layer-groups', { params: { path: { workspace } }, body }),
        );
    if (!group) {
      setPublicId('');
      setTitle('');
      setMembers([]);
    }
    onSaved(saved);
  });
  const toggle = (resource: string, on: boolean) =>
    setMembers((current) =>
      on ? [...current, { resource }] : current.filter((member) => member.resource !== resource),
    );
  const picked = new Set(members.map((m) => m.resource));
  // A member the lists don't show (e.g. beyond the pages read) stays pickable.
  const known = new Set(candidates.map((c) => c.resource));
  const extra = members
    .filter((m) => !known.has(m.resource))
    .map((m): Candidate => ({ resource: m.resource, label: m.resource, kind: 'layer' }));
  const options = [...candidates, ...extra].filter(
    (c) => !(c.kind === 'group' && c.resource === group?.public_id),
  );
  const prefix = group ? `edit-${group.id}` : 'create';
  const membersIssue = issueFor(save.error, 'body.members');
  const box = (kind: Candidate['kind'], legend: string) => {
    const list = options.filter((c) => c.kind === kind);
    if (list.length === 0 && kind === 'group') return null;
    return (
      <fieldset class="members" aria-describedby={membersIssue ? `${prefix}-members-error` : undefined}>
        <legend>{legend}</legend>
        {list.length === 0 ? (
          <p>No layers in this workspace yet: publish some from a service first.</p>
        ) : null}
        {list.map((c) => (
          <div class="check" key={c.resource}>
            <input
              id={`${prefix}-${kind}-${c.resource}`}
              type="checkbox"
              checked={picked.has(c.resource)}
              onChange={(e) => toggle(c.resource, e.currentTarget.checked)}
            />
            <label for={`${prefix}-${kind}-${c.resource}`}>{c.label}</label>
          </div>
        ))}
      </fieldset>
    );
  };
  return (
    <form onSubmit={(event) => void save.run(event)}>
      <TextInput
        label="Public id"
        hint="Unique in the workspace among layers and groups: the group's name in WMS and tiles."
        error={issueFor(save.error, 'body.public_id')}
        required
        value={publicId}
        onInput={setPublicId}
      />
      <Field label="Title" error={issueFor(save.error, 'body.title')}>
        {(props) => <input {...props} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />}
      </Field>
      {box('layer', 'Layers')}
      {box('group', 'Layer groups')}
      {membersIssue ? <ErrorNote id={`${prefix}-members-error`} error={`Members: ${membersIssue}`} /> : null}
      {members.length ? <p>Members, in order: {members.map((m) => m.resource).join(', ')}</p> : null}
      <SubmitActions label={group ? 'Save group' : 'Create group'} busy={save.busy} onCancel={onCancel} />
      <ErrorNote error={save.error} />
    </form>
  );
}

export function LayerGroupsPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/layer-groups', {
          params: { path: { workspace }, query: { limit: 50, ...page } },
        }),
      ),
    [workspace],
  );
  const candidates = useLoad(() => candidatesOf(workspace), [workspace]);
  const [editing, setEditing] = useState<Group>();
  const [notice, setNotice] = useState<string>();
  const refresh = async () => {
    await Promise.all([list.reload(), candidates.reload()]);
  };
  const remove = useConfirmed(async (group: Group) => {
    setNotice(undefined);
    await call(
      api.DELETE('/api/v1/workspaces/{workspace}/layer-groups/{group}', {
        params: { path: { workspace, group: group.id }, header: { 'If-Match': etag(group.version) } },
      }),
    );
    if (editing?.id === group.id) setEditing(undefined);
    setNotice(`Deleted ${group.public_id}.`);
    await refresh();
  });

  return (
    <>
      <PageTitle title={`Layer groups of ${workspace}`}>Layer groups of {workspace}</PageTitle>
      <p>
        <a href={paths.services(workspace)}>Services of {workspace}</a> (their layers are what groups hold)
      </p>
      <section aria-labelledby="groups-heading">
        <h2 id="groups-heading">Layer groups</h2>
        <Notice>{notice}</Notice>
        <PagedTable
          state={list}
          pager={list.pager}
          items={(data) => data.layer_groups}
          columns={['Public id', 'Title', 'Members', 'Version', 'Updated', 'Actions']}
          empty={<p>No layer groups yet.</p>}
        >
          {(g) => (
            <Fragment key={g.id}>
              <tr>
                <td>{g.public_id}</td>
                <td>{g.title}</td>
                <td>{g.members.map((m) => m.resource).join(', ')}</td>
                <td>{g.version}</td>
                <td>
                  <When at={g.updated_at} />
                </td>
                <td>
                  <div class="row">
                    <button type="button" aria-label={`Edit ${g.public_id}`} onClick={() => setEditing(g)}>
                      Edit
                    </button>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Delete ${g.public_id}`}
                      onClick={() => remove.ask(g)}
                    >
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
              <RowError error={remove.last?.id === g.id ? remove.error : undefined} colSpan={6} />
            </Fragment>
          )}
        </PagedTable>
      </section>
      {editing ? (
        <section aria-labelledby="edit-heading">
          <h2 id="edit-heading">Edit {editing.public_id}</h2>
          {candidates.data ? (
            <GroupForm
              key={`${editing.id}:${editing.version}`}
              workspace={workspace}
              group={editing}
              candidates={candidates.data}
              onSaved={(saved) => {
                setEditing(undefined);
                setNotice(`Saved ${saved.public_id} (version ${saved.version}).`);
                void refresh();
              }}
              onCancel={() => setEditing(undefined)}
            />
          ) : null}
        </section>
      ) : null}
      <section aria-labelledby="create-heading">
        <h2 id="create-heading">Create a layer group</h2>
        <ErrorNote error={candidates.error} />
        {candidates.data ? (
          <GroupForm
            workspace={workspace}
            candidates={candidates.data}
            onSaved={(saved) => {
              setNotice(`Created ${saved.public_id}.`);
              void refresh();
            }}
          />
        ) : candidates.loading ? (
          <p>Loading the workspace's layers…</p>
        ) : null}
      </section>
      <Confirm
        {...remove.dialog}
        title={`Delete layer group ${remove.asking?.public_id ?? ''}?`}
        confirmLabel="Delete group"
        danger
      >
        <p>Its layers stay; a group another group contains can't be deleted until that group lets it go.</p>
      </Confirm>
    </>
  );
}
