/**
 * A workspace's API keys: the paged list (prefixes only), creating one — its secret is shown once,
 * held only in this page's memory, never stored — and revoking one (If-Match with its version).
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, call, etag, type Schemas, WORKSPACE_ROLES, type WorkspaceRole } from '#console/api.ts';
import { useAction } from '#console/components/data.tsx';
import { AskButton, Confirm, useConfirmed } from '#console/components/dialogs.tsx';
import {
  ErrorNote,
  FormSection,
  issueFor,
  Notice,
  reasonFor,
  SelectInput,
  TextInput,
} from '#console/components/forms.tsx';
import { PagedTable, usePagedList } from '#console/components/lists.tsx';
import { CopyButton, PageTitle, When } from '#console/components/page-parts.tsx';
import { isoOf } from '#console/format.ts';

type ApiKey = Schemas['APIKey'];
type ApiKeyWithSecret = Schemas['APIKeyWithSecret'];

function statusOf(key: ApiKey): string {
  if (key.revoked) return 'Revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return 'Expired';
  return 'Active';
}

/** The one showing of a new key's secret. */
function NewSecret({ created, onDone }: { created: ApiKeyWithSecret; onDone: () => void }) {
  return (
    <section aria-labelledby="secret-heading" class="new-secret">
      <h2 id="secret-heading">New key {created.name}</h2>
      <p>
        <strong>Copy this key now: it will not be shown again.</strong> Only its hash is stored; if it is
        lost, revoke it and create another.
      </p>
      <p class="secret" data-testid="api-key-secret">
        {created.key}
      </p>
      <div class="actions">
        <CopyButton text={created.key} label="Copy the key" />
        <button type="button" onClick={onDone}>
          I have copied it — hide the key
        </button>
      </div>
    </section>
  );
}

function CreateKey({
  workspace,
  onCreated,
}: {
  workspace: string;
  onCreated: (key: ApiKeyWithSecret) => void;
}) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<WorkspaceRole>('viewer');
  const [expires, setExpires] = useState('');
  const [ownerName, setOwnerName] = useState('');
  const [ownerEmail, setOwnerEmail] = useState('');
  const create = useAction(async (event: Event) => {
    event.preventDefault();
    const expiresAt = isoOf(expires);
    const created = await call(
      api.POST('/api/v1/workspaces/{workspace}/apikeys', {
        params: { path: { workspace } },
        body: {
          name: name.trim(),
          role_id: role,
          ...(expiresAt ? { expires_at: expiresAt } : {}),
          ...(ownerName.trim() ? { owner_name: ownerName.trim() } : {}),
          ...(ownerEmail.trim() ? { owner_email: ownerEmail.trim() } : {}),
        },
      }),
    );
    setName('');
    setExpires('');
    setOwnerName('');
    setOwnerEmail('');
    onCreated(created);
  });
  return (
    <FormSection id="create-heading" heading="Create an API key" onSubmit={create.run}>
      <TextInput
        label="Name"
        hint="What the key is for, e.g. ci-publisher."
        error={issueFor(create.error, 'body.name')}
        required
        maxLength={128}
        value={name}
        onInput={setName}
      />
      <SelectInput
        label="Role"
        hint="What the key may do in this workspace."
        error={issueFor(create.error, 'body.role_id')}
        value={role}
        options={WORKSPACE_ROLES}
        onChange={setRole}
      />
      <TextInput
        label="Expires"
        hint="Optional, in your time zone; empty: the key never expires."
        error={issueFor(create.error, 'body.expires_at') ?? reasonFor(create.error, ['expires_at_in_past'])}
        type="datetime-local"
        value={expires}
        onInput={setExpires}
      />
      <TextInput
        label="Owner name"
        hint="Optional."
        error={issueFor(create.error, 'body.owner_name')}
        value={ownerName}
        onInput={setOwnerName}
      />
      <TextInput
        label="Owner email"
        hint="Optional."
        error={issueFor(create.error, 'body.owner_email')}
        type="email"
        value={ownerEmail}
        onInput={setOwnerEmail}
      />
      <button type="submit" class="primary" disabled={create.busy}>
        Create key
      </button>
      <ErrorNote error={create.error} />
    </FormSection>
  );
}

export function ApiKeysPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const list = usePagedList(
    (page) =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/apikeys', {
          params: { path: { workspace }, query: { limit: 50, ...page } },
        }),
      ),
    [workspace],
  );
  // The secret lives only here: leaving or reloading the page forgets it.
  const [created, setCreated] = useState<ApiKeyWithSecret>();
  const [notice, setNotice] = useState<string>();

  const revoke = useConfirmed(async (key: ApiKey) => {
    await call(
      api.DELETE('/api/v1/workspaces/{workspace}/apikeys/{keyId}', {
        params: { path: { workspace, keyId: key.id }, header: { 'If-Match': etag(key.version) } },
      }),
    );
    setNotice(`Key ${key.name} (${key.key_prefix}…) revoked: it no longer authenticates.`);
    if (created?.id === key.id) setCreated(undefined);
    await list.reload();
  });

  return (
    <>
      <PageTitle title={`API keys · ${workspace}`}>API keys of {workspace}</PageTitle>
      {created ? <NewSecret created={created} onDone={() => setCreated(undefined)} /> : null}
      <CreateKey
        workspace={workspace}
        onCreated={(key) => {
          setNotice(undefined);
          setCreated(key);
          void list.reload();
        }}
      />
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Keys</h2>
        <PagedTable
          state={list}
          pager={list.pager}
          items={(data) => data.api_keys}
          columns={['Name', 'Prefix', 'Role', 'Owner', 'Created', 'Expires', 'Status', 'Actions']}
          empty={<p>No API keys in this workspace yet.</p>}
        >
          {(key) => (
            <tr key={key.id} data-key-id={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.key_prefix}…</code>
              </td>
              <td>{key.role_id}</td>
              <td>{[key.owner_name, key.owner_email].filter(Boolean).join(' · ') || '—'}</td>
              <td>
                <When at={key.created_at} />
              </td>
              <td>{key.expires_at ? <When at={key.expires_at} /> : 'never'}</td>
              <td>{statusOf(key)}</td>
              <td>
                {key.revoked ? null : (
                  <AskButton
                    action={revoke}
                    subject={key}
                    label={`Revoke key ${key.name} (${key.key_prefix})`}
                  >
                    Revoke
                  </AskButton>
                )}
              </td>
            </tr>
          )}
        </PagedTable>
        <ErrorNote error={revoke.error} />
        <Notice>{notice}</Notice>
      </section>
      <Confirm
        {...revoke.dialog}
        title={`Revoke key ${revoke.asking?.name ?? ''}?`}
        confirmLabel="Revoke"
        danger
      >
        <p>
          The key <code>{revoke.asking?.key_prefix}…</code> stops authenticating at once. This cannot be
          undone.
        </p>
      </Confirm>
    </>
  );
}
