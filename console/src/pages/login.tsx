/** Sign-in as AuthConsoleConfig says: an API key or JWT pasted in, and/or OIDC code + PKCE. */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useAction, useLoad } from '#console/components/data.tsx';
import { ErrorNote, Field, FormSection } from '#console/components/forms.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { beginOidcLogin } from '#console/oidc.ts';
import { paths } from '#console/routes.ts';
import { consoleConfig, loginWithToken } from '#console/session.ts';

/** Where to go after signing in: the `next` of the login URL when it is a console path. */
export function nextOf(query: Record<string, string>): string {
  const next = query.next;
  // Only a path of this console: never an open redirect.
  return next?.startsWith('/console/') && !next.startsWith('//') ? next : paths.workspaces;
}

export function LoginPage() {
  const { query } = useLocation();
  const config = useLoad(() => consoleConfig(), []);
  const [token, setToken] = useState('');
  const tokenLogin = useAction(async (event: Event) => {
    event.preventDefault();
    await loginWithToken(token.trim());
  });
  const oidcLogin = useAction(async () => {
    if (config.data) await beginOidcLogin(config.data, nextOf(query));
  });
  const auth = config.data?.auth;
  return (
    <main id="main" class="login">
      <PageTitle title="Sign in">Sign in to GeoPlane</PageTitle>
      {config.error ? <ErrorNote error={config.error} /> : null}
      {auth && !auth.enabled ? <p>The console is switched off for this deployment.</p> : null}
      {auth?.enabled && auth.oidc.enabled ? (
        <section aria-labelledby="oidc-heading">
          <h2 id="oidc-heading">Single sign-on</h2>
          <p>Sign in at {new URL(auth.oidc.issuer).host}.</p>
          <button
            type="button"
            class="primary"
            disabled={oidcLogin.busy}
            onClick={() => void oidcLogin.run()}
          >
            Sign in with single sign-on
          </button>
          <ErrorNote error={oidcLogin.error} />
        </section>
      ) : null}
      {auth?.enabled && auth.token_login ? (
        <FormSection id="token-heading" heading="API key or token" onSubmit={tokenLogin.run}>
          <Field
            label="API key or JWT"
            hint="Sent once to start a browser session; it is not stored in the browser."
          >
            {(props) => (
              <input
                {...props}
                type="password"
                autoComplete="off"
                required
                value={token}
                onInput={(event) => setToken(event.currentTarget.value)}
              />
            )}
          </Field>
          <button type="submit" class="primary" disabled={tokenLogin.busy || token.trim() === ''}>
            Sign in
          </button>
          <ErrorNote error={tokenLogin.error} />
        </FormSection>
      ) : null}
    </main>
  );
}
