/**
 * Roles (super_admin): the built-in and custom roles, creating and deleting a custom role
 * (If-Match), and one role's policies (`?role=<id>`): adding an allow rule and removing one.
 */
import operations from 'virtual:operations';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { allOf, api, call, etag, type Schemas } from '#console/api.ts';
import { Loaded, useAction, useLoad } from '#console/components/data.tsx';
import { AskButton, Confirm, useConfirmed } from '#console/components/dialogs.tsx';
import {
  ErrorNote,
  Field,
  issueFor,
  Notice,
  SelectInput,
  Suggestions,
  TextInput,
} from '#console/components/forms.tsx';
import { PagedTable, Table, usePagedList } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';

type Role = Schemas['Role'];
type Policy = Schemas['StoredRolePolicy'];
type PolicyInput = Schemas['RolePolicy'];

const SERVICES = allOf<PolicyInput['service']>({
  management: true,
  wms: true,
  wfs: true,
  wcs: true,
  wmts: true,
  ogcapi: true,
  'ogc-tiles': true,
});
const ACTIONS = allOf<PolicyInput['action']>({ read: true, write: true, delete: true, manage: true });

/** The management operations a custom role can be granted (not the super_admin-only ones), by id. */
const grantable = new Map(
  Object.values(operations)
    .filter((op) => op.permission !== 'global')
    .map((op) => [op.operationId, op.permission] as const)
    .sort(([a], [b]) => a.localeCompare(b)),
);

const roleUrl = (id: string) => `${paths.roles}?role=${encodeURIComponent(id)}`;

function CreateRole({ onCreated }: { onCreated: (role: Role) => void }) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useAction(async (event: Event) => {
    event.preventDefault();
    const role = await call(
      api.POST('/api/v1/roles', {
        body: {
          id: id.trim(),
          ...(name.trim() ? { name: name.trim() } : {}),
          ...(description.trim() ? { description: description.trim() } : {}),
        },
      }),
    );
    setId('');
    setName('');
    setDescription('');
    onCreated(role);
  });
  return (
    <section aria-labelledby="create-role-heading">
      <h2 id="create-role-heading">Create a custom role</h2>
      <p>A new role grants nothing until policies are added. A deleted role's id can never be used again.</p>
      <form onSubmit={(event) => void create.run(event)}>
        <Field
          label="Role id"
          hint="2-64 characters: a lower-case letter, then lower-case letters, digits, '_' or '-'."
          error={issueFor(create.error, 'body.id')}
        >
          {(props) => <input {...props} required value={id} onInput={(e) => setId(e.currentTarget.value)} />}
        </Field>
        <Field label="Display name" hint="Optional." error={issueFor(create.error, 'body.name')}>
          {(props) => <input {...props} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <TextInput
          label="Description"
          hint="Optional."
          error={issueFor(create.error, 'body.description')}
          value={description}
          onInput={setDescription}
        />
        <button type="submit" class="primary" disabled={create.busy}>
          Create role
        </button>
        <ErrorNote error={create.error} />
      </form>
    </section>
  );
}

/** A workspace id as its name (a policy stores the id; `*` is every workspace). */
function WorkspaceOf({ id }: { id: string }) {
  const ws = useLoad(
    () =>
      id === '*'
        ? Promise.resolve(undefined)
        : call(api.GET('/api/v1/workspaces/{workspace}', { params: { path: { workspace: id } } })),
    [id],
  );
  if (id === '*') return <span>every workspace (*)</span>;
  if (ws.data) return <a href={paths.workspace(ws.data.name)}>{ws.data.name}</a>;
  return <code>{id}</code>;
}

function AddPolicy({ roleId, onAdded }: { roleId: string; onAdded: () => Promise<void> }) {
  const [workspace, setWorkspace] = useState('*');
  const [service, setService] = useState<PolicyInput['service']>('management');
  const [operation, setOperation] = useState('');
  const [action, setAction] = useState<PolicyInput['action']>('read');
  const add = useAction(async (event: Event) => {
    event.preventDefault();
    await call(
      api.POST('/api/v1/roles/{roleId}/policies', {
        params: { path: { roleId } },
        body: {
          workspace: workspace.trim(),
          service,
          ...(operation.trim() ? { operation: operation.trim() } : {}),
          action,
        },
      }),
    );
    setOperation('');
    await onAdded();
  });
  const listId = `operations-${roleId}`;
  return (
    <form onSubmit={(event) => void add.run(event)}>
      <TextInput
        label="Workspace"
        hint="A workspace name or id, or * for every workspace."
        error={issueFor(add.error, 'body.workspace')}
        required
        value={workspace}
        onInput={setWorkspace}
      />
      <SelectInput
        label="Service"
        error={issueFor(add.error, 'body.service')}
        value={service}
        options={SERVICES}
        onChange={setService}
      />
      <TextInput
        label="Operation"
        hint={
          service === 'management'
            ? 'An operationId of this API (e.g. createLayer); empty: every operation of the action.'
            : `A ${service} protocol operation (e.g. GetMap); empty: every operation of the action.`
        }
        error={issueFor(add.error, 'body.operation')}
        list={service === 'management' ? listId : undefined}
        value={operation}
        onInput={(text) => {
          const value = text;
          setOperation(value);
          // A management operation has one action: its permission class.
          const needed = service === 'management' ? grantable.get(value.trim()) : undefined;
          if (needed && (ACTIONS as string[]).includes(needed)) setAction(needed as PolicyInput['action']);
        }}
      />
      <Suggestions id={listId} values={[...grantable.keys()]} />
      <SelectInput
        label="Action"
        hint={
          service === 'management'
            ? 'The operation’s permission class: read, write or manage.'
            : 'The action the protocol operation uses.'
        }
        error={issueFor(add.error, 'body.action')}
        value={action}
        options={ACTIONS}
        onChange={setAction}
      />
      <button type="submit" class="primary" disabled={add.busy}>
        Add policy
      </button>
      <ErrorNote error={add.error} />
    </form>
  );
}

function RolePolicies({ role }: { role: Role }) {
  const policies = useLoad(
    () => call(api.GET('/api/v1/roles/{roleId}/policies', { params: { path: { roleId: role.id } } })),
    [role.id],
  );
  const [notice, setNotice] = useState<string>();
  const remove = useConfirmed(async (policy: Policy) => {
    await call(
      api.DELETE('/api/v1/roles/{roleId}/policies/{policyId}', {
        params: {
          path: { roleId: role.id, policyId: policy.id },
          header: { 'If-Match': etag(policy.version) },
        },
      }),
    );
    setNotice(`Policy ${policy.service} ${policy.operation} ${policy.action} removed.`);
    await policies.reload();
  });
  return (
    <section aria-labelledby="policies-heading">
      <h2 id="policies-heading">Policies of {role.id}</h2>
      <Loaded state={policies}>
        {(data) => (
          <>
            <Table columns={['Workspace', 'Service', 'Operation', 'Action', 'Added', 'Actions']}>
              {data.policies.map((p) => (
                <tr key={p.id}>
                  <td>
                    <WorkspaceOf id={p.workspace} />
                  </td>
                  <td>{p.service}</td>
                  <td>
                    <code>{p.operation}</code>
                  </td>
                  <td>{p.action}</td>
                  <td>
                    <When at={p.created_at} />
                  </td>
                  <td>
                    <AskButton
                      action={remove}
                      subject={p}
                      label={`Remove policy ${p.service} ${p.operation} ${p.action}`}
                    >
                      Remove
                    </AskButton>
                  </td>
                </tr>
              ))}
            </Table>
            {data.policies.length === 0 ? <p>No policies: this role grants nothing yet.</p> : null}
          </>
        )}
      </Loaded>
      <ErrorNote error={remove.error} />
      <Notice>{notice}</Notice>
      <h3>Add a policy</h3>
      <AddPolicy
        roleId={role.id}
        onAdded={async () => {
          setNotice(undefined);
          await policies.reload();
        }}
      />
      <Confirm {...remove.dialog} title="Remove this policy?" confirmLabel="Remove" danger>
        <p>
          Role {role.id} stops granting {remove.asking?.service} <code>{remove.asking?.operation}</code> (
          {remove.asking?.action}) at once.
        </p>
      </Confirm>
    </section>
  );
}

function RoleView({ roleId }: { roleId: string }) {
  const role = useLoad(
    () => call(api.GET('/api/v1/roles/{roleId}', { params: { path: { roleId } } })),
    [roleId],
  );
  return (
    <>
      <PageTitle title={`Role ${roleId}`}>Role {roleId}</PageTitle>
      <Loaded state={role}>
        {(data) =>
          data.is_system ? (
            <p>
              {data.id} is a built-in role: its permissions are fixed. <a href={paths.roles}>All roles</a>
            </p>
          ) : (
            <>
              <p>
                <a href={paths.roles}>Back to all roles</a>
              </p>
              <dl class="facts">
                <dt>Name</dt>
                <dd>{data.name}</dd>
                <dt>Description</dt>
                <dd>{data.description || '—'}</dd>
                <dt>Created</dt>
                <dd>
                  <When at={data.created_at} />
                </dd>
                <dt>Version</dt>
                <dd>{data.version ?? '—'}</dd>
              </dl>
              <RolePolicies role={data} />
            </>
          )
        }
      </Loaded>
    </>
  );
}

function RoleList() {
  const list = usePagedList(
    (page) => call(api.GET('/api/v1/roles', { params: { query: { limit: 200, ...page } } })),
    [],
  );
  const [notice, setNotice] = useState<string>();
  const remove = useConfirmed(async (role: Role) => {
    await call(
      api.DELETE('/api/v1/roles/{roleId}', {
        params: {
          path: { roleId: role.id },
          ...(role.version !== undefined ? { header: { 'If-Match': etag(role.version) } } : {}),
        },
      }),
    );
    setNotice(`Role ${role.id} deleted; its id is retired.`);
    await list.reload();
  });

  return (
    <>
      <PageTitle title="Roles">Roles</PageTitle>
      <CreateRole
        onCreated={(role) => {
          setNotice(`Role ${role.id} created.`);
          void list.reload();
        }}
      />
      <section aria-labelledby="roles-heading">
        <h2 id="roles-heading">All roles</h2>
        <PagedTable
          state={list}
          pager={list.pager}
          items={(data) => data.roles}
          columns={['Id', 'Name', 'Description', 'Kind', 'Created', 'Actions']}
          empty={<p>No roles on this page.</p>}
        >
          {(r) => (
            <tr key={r.id}>
              <td>
                <code>{r.id}</code>
              </td>
              <td>{r.name}</td>
              <td>{r.description ?? ''}</td>
              <td>{r.is_system ? 'built-in' : 'custom'}</td>
              <td>{r.created_at ? <When at={r.created_at} /> : '—'}</td>
              <td>
                {r.is_system ? null : (
                  <div class="row">
                    <a href={roleUrl(r.id)} aria-label={`Policies of ${r.id}`}>
                      Policies
                    </a>
                    <AskButton action={remove} subject={r} label={`Delete role ${r.id}`}>
                      Delete
                    </AskButton>
                  </div>
                )}
              </td>
            </tr>
          )}
        </PagedTable>
        <ErrorNote error={remove.error} />
        <Notice>{notice}</Notice>
      </section>
      <Confirm
        {...remove.dialog}
        title={`Delete role ${remove.asking?.id ?? ''}?`}
        confirmLabel="Delete"
        danger
      >
        <p>
          Its policies go with it and its id is retired forever. A role still given by a claim mapping can't
          be deleted.
        </p>
      </Confirm>
    </>
  );
}

/** The list of roles, or one role's policies with `?role=<id>`. */
export function RolesPage() {
  const { query } = useLocation();
  return query.role ? <RoleView roleId={query.role} /> : <RoleList />;
}
