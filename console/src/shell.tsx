/** The frame of every page after sign-in: skip link, header, navigation, the page, the 429 notice. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { onRateLimited, rateLimitWait } from './api.ts';
import { paths, workspacePages } from './routes.ts';
import { logout, type Me } from './session.ts';

function workspaceOfPath(path: string): string | undefined {
  const match = /^\/console\/workspaces\/([^/]+)/.exec(path);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}

function NavLink({ href, children }: { href: string; children: ComponentChildren }) {
  const { path } = useLocation();
  const current = path === href;
  return (
    <a href={href} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}

/**
 * The 429 notice, shown while the console waits a Retry-After: in the frame of every page, and on
 * the loading screen (the first calls of a page opened directly may be the ones told to wait).
 */
export function RateLimitNotice() {
  const [waiting, setWaiting] = useState(rateLimitWait);
  useEffect(() => {
    setWaiting(rateLimitWait());
    return onRateLimited(setWaiting);
  }, []);
  if (waiting <= 0) return null;
  return (
    <p class="notice" role="status">
      The API asked the console to slow down; waiting {Math.ceil(waiting)} s before retrying.
    </p>
  );
}

export function Shell({ me, children }: { me: Me; children: ComponentChildren }) {
  const { path, route } = useLocation();
  const workspace = workspaceOfPath(path);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={paths.home}>
          GeoPlane
        </a>
        <div class="who">
          <span>
            {me.principal}
            {me.super_admin ? ' · super_admin' : ''}
          </span>
          <button type="button" onClick={() => void logout().then(() => route(paths.login))}>
            Sign out
          </button>
        </div>
      </header>
      <div class="layout">
        <nav class="side" aria-label="Console">
          <ul>
            <li>
              <NavLink href={paths.workspaces}>Workspaces</NavLink>
            </li>
            <li>
              <NavLink href={paths.deletions}>Deletions</NavLink>
            </li>
            <li>
              <NavLink href={paths.tileMatrixSets}>Tile matrix sets</NavLink>
            </li>
            {me.super_admin ? (
              <>
                <li>
                  <NavLink href={paths.roles}>Roles</NavLink>
                </li>
                <li>
                  <NavLink href={paths.globalClaimMappings}>Global claim mappings</NavLink>
                </li>
                <li>
                  <NavLink href={paths.audit}>Audit</NavLink>
                </li>
                <li>
                  <NavLink href={paths.integrity}>Catalog integrity</NavLink>
                </li>
                <li>
                  <NavLink href={paths.caches}>Caches</NavLink>
                </li>
                <li>
                  <NavLink href={paths.sessions}>Browser sessions</NavLink>
                </li>
              </>
            ) : null}
          </ul>
          {workspace ? (
            <>
              <h2 class="nav-heading">Workspace {workspace}</h2>
              <ul>
                {workspacePages.map(([label, href]) => (
                  <li key={label}>
                    <NavLink href={href(workspace)}>{label}</NavLink>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </nav>
        <main id="main" tabIndex={-1}>
          <RateLimitNotice />
          {children}
        </main>
      </div>
    </>
  );
}
