/** Where the issuer sends the browser back: redeem the code, start the session, go on. */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ErrorNote } from '#console/components/forms.tsx';
import { PageTitle } from '#console/components/page-parts.tsx';
import { completeOidcLogin } from '#console/oidc.ts';
import { paths } from '#console/routes.ts';

let started = false;

export function CallbackPage() {
  const { route } = useLocation();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    // The code is single-use: redeem it once even if the page renders twice.
    if (started) return;
    started = true;
    completeOidcLogin(location.search)
      .then((next) => route(next.startsWith('/console/') ? next : paths.workspaces, true))
      .catch(setError);
  }, [route]);
  return (
    <main id="main" class="login">
      <PageTitle title="Signing in">Signing in…</PageTitle>
      {error ? (
        <>
          <ErrorNote error={error} />
          <p>
            <a href={paths.login}>Back to sign-in</a>
          </p>
        </>
      ) : (
        <p role="status">Completing the sign-in with your identity provider.</p>
      )}
    </main>
  );
}
