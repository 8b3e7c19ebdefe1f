/**
 * Claim mappings: a token claim (name = value) earns a role — in one workspace
 * (/console/workspaces/:workspace/claim-mappings) or in every workspace, or super_admin
 * (/console/claim-mappings, super_admin). List, create, delete (If-Match).
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, call, etag, type Schemas, WORKSPACE_ROLES } from '#console/api.ts';
import { useAction, useLoad } from '#console/components/data.tsx';
import { AskButton, Confirm, useConfirmed } from '#console/components/dialogs.tsx';
import {
  ErrorNote,
  FormSection,
  issueFor,
  Notice,
  reasonFor,
  Suggestions,
  TextInput,
} from '#console/components/forms.tsx';
import { PagedTable, usePagedList } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { useSession } from '#console/session.ts';

type Mapping = Schemas['ClaimMapping'];
type MappingInput = { claim_name: string; claim_value: string; role_id: string; priority?: number };

/** The roles to suggest: the built-ins, and the custom ones when the operator may list them. */
function useRoleSuggestions(global: boolean) {
  const me = useSession();
  const custom = useLoad(
    () =>
      me?.super_admin
        ? call(api.GET('/api/v1/roles', { params: { query: { limit: 1000 } } })).then((list) =>
            list.roles.filter((r) => !r.is_system).map((r) => r.id),
          )
        : Promise.resolve([] as string[]),
    [me?.super_admin],
  );
  return [...WORKSPACE_ROLES, ...(global ? ['super_admin'] : []), ...(custom.data ?? [])];
}

function CreateMapping({
  workspace,
  onCreated,
}: {
  workspace: string | undefined;
  onCreated: (mapping: Mapping) => void;
}) {
  const [claimName, setClaimName] = useState('');
  const [claimValue, setClaimValue] = useState('');
  const [role, setRole] = useState('viewer');
  const [priority, setPriority] = useState('');
  const roles = useRoleSuggestions(workspace === undefined);
  const create = useAction(async (event: Event) => {
    event.preventDefault();
    const body: MappingInput = {
      claim_name: claimName.trim(),
      claim_value: claimValue,
      role_id: role.trim(),
      ...(priority.trim() !== '' ? { priority: Number(priority) } : {}),
    };
    const created = workspace
      ? await call(
          api.POST('/api/v1/workspaces/{workspace}/claim-mappings', {
            params: { path: { workspace } },
            body,
          }),
        )
      : await call(api.POST('/api/v1/claim-mappings', { body }));
    setClaimValue('');
    onCreated(created);
  });
  return (
    <FormSection id="create-heading" heading="Add a claim mapping" onSubmit={create.run}>
      <TextInput
        label="Claim name"
        hint="A claim of the token, or a dotted path such as realm_access.roles; an array matches on any element."
        error={issueFor(create.error, 'body.claim_name')}
        required
        value={claimName}
        onInput={setClaimName}
      />
      <TextInput
        label="Claim value"
        hint="The value it must equal."
        error={issueFor(create.error, 'body.claim_value')}
        required
        value={claimValue}
        onInput={setClaimValue}
      />
      <TextInput
        label="Role"
        hint={
          workspace
            ? `The role it earns in ${workspace}: a built-in or a custom role id.`
            : 'The role it earns in every workspace, or super_admin.'
        }
        error={
          issueFor(create.error, 'body.role_id') ?? reasonFor(create.error, ['unknown_role', 'invalid_role'])
        }
        required
        list="claim-mapping-roles"
        value={role}
        onInput={setRole}
      />
      <Suggestions id="claim-mapping-roles" values={roles} />
      <TextInput
        label="Priority"
        hint="Optional whole number; higher is checked first (default 0)."
        error={issueFor(create.error, 'body.priority')}
        type="number"
        step={1}
        value={priority}
        onInput={setPriority}
      />
      <button type="submit" class="primary" disabled={create.busy}>
        Add mapping
      </button>
      <ErrorNote error={create.error} />
    </FormSection>
  );
}

export function ClaimMappingsPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string | undefined;
  const list = usePagedList(
    (page) => {
      const query = { limit: 50, ...page };
      return workspace
        ? call(
            api.GET('/api/v1/workspaces/{workspace}/claim-mappings', {
              params: { path: { workspace }, query },
            }),
          )
        : call(api.GET('/api/v1/claim-mappings', { params: { query } }));
    },
    [workspace],
  );
  const [notice, setNotice] = useState<string>();
  const remove = useConfirmed(async (mapping: Mapping) => {
    const header = { 'If-Match': etag(mapping.version) };
    if (workspace) {
      await call(
        api.DELETE('/api/v1/workspaces/{workspace}/claim-mappings/{mappingId}', {
          params: { path: { workspace, mappingId: mapping.id }, header },
        }),
      );
    } else {
      await call(
        api.DELETE('/api/v1/claim-mappings/{mappingId}', {
          params: { path: { mappingId: mapping.id }, header },
        }),
      );
    }
    setNotice(`Mapping ${mapping.claim_name} = ${mapping.claim_value} → ${mapping.role_id} deleted.`);
    await list.reload();
  });
  const title = workspace ? `Claim mappings of ${workspace}` : 'Global claim mappings';

  return (
    <>
      <PageTitle title={title}>{title}</PageTitle>
      <p>
        {workspace ? (
          <>
            A signed-in token whose claim matches gets the mapped role in this workspace. Mappings for every
            workspace are the <a href={paths.globalClaimMappings}>global claim mappings</a>.
          </>
        ) : (
          'A signed-in token whose claim matches gets the mapped role in every workspace (or super_admin).'
        )}
      </p>
      <CreateMapping
        workspace={workspace}
        onCreated={(mapping) => {
          setNotice(`Mapping ${mapping.claim_name} = ${mapping.claim_value} → ${mapping.role_id} added.`);
          void list.reload();
        }}
      />
      <section aria-labelledby="mappings-heading">
        <h2 id="mappings-heading">Mappings</h2>
        <PagedTable
          state={list}
          pager={list.pager}
          items={(data) => data.claim_mappings}
          columns={['Claim', 'Value', 'Role', 'Priority', 'Created', 'Actions']}
          empty={<p>No claim mappings yet.</p>}
        >
          {(m) => (
            <tr key={m.id}>
              <td>
                <code>{m.claim_name}</code>
              </td>
              <td>
                <code>{m.claim_value}</code>
              </td>
              <td>{m.role_id}</td>
              <td>{m.priority}</td>
              <td>
                <When at={m.created_at} />
              </td>
              <td>
                <AskButton
                  action={remove}
                  subject={m}
                  label={`Delete mapping ${m.claim_name} = ${m.claim_value} → ${m.role_id}`}
                >
                  Delete
                </AskButton>
              </td>
            </tr>
          )}
        </PagedTable>
        <ErrorNote error={remove.error} />
        <Notice>{notice}</Notice>
      </section>
      <Confirm {...remove.dialog} title="Delete this claim mapping?" confirmLabel="Delete" danger>
        <p>
          Tokens with <code>{remove.asking?.claim_name}</code> = <code>{remove.asking?.claim_value}</code>{' '}
          stop getting {remove.asking?.role_id} at once.
        </p>
      </Confirm>
    </>
  );
}
