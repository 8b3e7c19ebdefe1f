/**
 * Browser sessions (super_admin, ADR 0134): the sessions not yet expired, newest first, who holds
 * each and when it ends, and revoking one after confirming (its next request is refused).
 */
import { useState } from 'preact/hooks';
import { api, call, etag, type Schemas } from '#console/api.ts';
import { AskButton, Confirm, useConfirmed } from '#console/components/dialogs.tsx';
import { ErrorNote, Notice } from '#console/components/forms.tsx';
import { PagedTable, usePagedList } from '#console/components/lists.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { useSession } from '#console/session.ts';

type BrowserSession = Schemas['BrowserSession'];

/** The roles a session held when it signed in or last refreshed, in a few words. */
function rolesOf(s: BrowserSession): string {
  const parts = s.super_admin ? ['super_admin'] : [];
  for (const r of s.workspace_roles) parts.push(`${r.role} in ${r.workspace}`);
  const more = s.workspace_role_count - s.workspace_roles.length;
  if (more > 0) parts.push(`and ${more} more`);
  return parts.length ? parts.join(', ') : 'none';
}

export function SessionsPage() {
  const me = useSession();
  const list = usePagedList(
    (page) => call(api.GET('/api/v1/auth/sessions', { params: { query: { limit: 100, ...page } } })),
    [],
  );
  const [notice, setNotice] = useState<string>();
  const revoke = useConfirmed(async (s: BrowserSession) => {
    await call(
      api.DELETE('/api/v1/auth/sessions/{session}', {
        params: { path: { session: s.id }, header: { 'If-Match': etag(s.version) } },
      }),
    );
    setNotice(`Session of ${s.principal} revoked: its next request is refused.`);
    await list.reload();
  });
  return (
    <>
      <PageTitle title="Browser sessions">Browser sessions</PageTitle>
      <p>
        Console sign-ins that have not expired, newest first. Revoking one ends it at its next request; the
        credential it stands on (a key or a token) keeps working.
      </p>
      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Sessions</h2>
        <PagedTable
          state={list}
          pager={list.pager}
          items={(data) => data.sessions}
          columns={['Who', 'Signed in with', 'Roles', 'Signed in', 'Last refreshed', 'Expires', 'Actions']}
          empty={<p>No browser sessions on this page.</p>}
        >
          {(s) => (
            <tr key={s.id}>
              <td>
                {s.principal}
                {me?.session_id === s.id ? ' (this session)' : ''}
                <br />
                <code>{s.principal_id}</code>
              </td>
              <td>
                {s.auth_method === 'apikey' ? 'API key' : `token${s.issuer ? ` from ${s.issuer}` : ''}`}
              </td>
              <td>{rolesOf(s)}</td>
              <td>
                <When at={s.created_at} />
              </td>
              <td>{s.refreshed_at ? <When at={s.refreshed_at} /> : '—'}</td>
              <td>
                <When at={s.expires_at} />
              </td>
              <td>
                <AskButton action={revoke} subject={s} label={`Revoke the session of ${s.principal}`}>
                  Revoke
                </AskButton>
              </td>
            </tr>
          )}
        </PagedTable>
        <ErrorNote error={revoke.error} />
        <Notice>{notice}</Notice>
      </section>
      <Confirm {...revoke.dialog} title="Revoke this session?" confirmLabel="Revoke" danger>
        <p>
          The browser signed in as {revoke.asking?.principal} is signed out at its next request
          {me?.session_id === revoke.asking?.id ? ' — this is your own session' : ''}.
        </p>
      </Confirm>
    </>
  );
}
