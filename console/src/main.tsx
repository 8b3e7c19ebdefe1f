/** The console's entry: the session gate and the route table of its pages (each loaded on first use). */
import './styles.css';
import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { CallbackPage } from './pages/callback.tsx';
import { LoginPage, nextOf } from './pages/login.tsx';
import { BASE, paths } from './routes.ts';
import { load, useSession } from './session.ts';
import { RateLimitNotice, Shell } from './shell.tsx';

const WorkspacesPage = lazy(() => import('./pages/workspaces.tsx').then((m) => m.WorkspacesPage));
const WorkspacePage = lazy(() => import('./pages/workspace.tsx').then((m) => m.WorkspacePage));
const ServicesPage = lazy(() => import('./pages/services.tsx').then((m) => m.ServicesPage));
const ServicePage = lazy(() => import('./pages/services.tsx').then((m) => m.ServicePage));
const WorkspaceLayersPage = lazy(() =>
  import('./pages/workspace-layers.tsx').then((m) => m.WorkspaceLayersPage),
);
const LayersPage = lazy(() => import('./pages/layers.tsx').then((m) => m.LayersPage));
const LayerPage = lazy(() => import('./pages/layers.tsx').then((m) => m.LayerPage));
const MosaicPage = lazy(() => import('./pages/mosaic.tsx').then((m) => m.MosaicPage));
const LayerGroupsPage = lazy(() => import('./pages/layer-groups.tsx').then((m) => m.LayerGroupsPage));
const StylesPage = lazy(() => import('./pages/styles.tsx').then((m) => m.StylesPage));
const StyleAssetsPage = lazy(() => import('./pages/style-assets.tsx').then((m) => m.StyleAssetsPage));
const SettingsPage = lazy(() => import('./pages/settings.tsx').then((m) => m.SettingsPage));
const TileMatrixSetsPage = lazy(() =>
  import('./pages/tile-matrix-sets.tsx').then((m) => m.TileMatrixSetsPage),
);
const ImportsPage = lazy(() => import('./pages/imports.tsx').then((m) => m.ImportsPage));
const ImportPage = lazy(() => import('./pages/imports.tsx').then((m) => m.ImportPage));
const DeletionsPage = lazy(() => import('./pages/deletions.tsx').then((m) => m.DeletionsPage));
const DeletionPage = lazy(() => import('./pages/deletions.tsx').then((m) => m.DeletionPage));
const ApiKeysPage = lazy(() => import('./pages/api-keys.tsx').then((m) => m.ApiKeysPage));
const RolesPage = lazy(() => import('./pages/roles.tsx').then((m) => m.RolesPage));
const ClaimMappingsPage = lazy(() => import('./pages/claim-mappings.tsx').then((m) => m.ClaimMappingsPage));
const AuditPage = lazy(() => import('./pages/audit.tsx').then((m) => m.AuditPage));
const IntegrityPage = lazy(() => import('./pages/integrity.tsx').then((m) => m.IntegrityPage));
const TileCachePage = lazy(() => import('./pages/tile-cache.tsx').then((m) => m.TileCachePage));
const CachesPage = lazy(() => import('./pages/caches.tsx').then((m) => m.CachesPage));
const SessionsPage = lazy(() => import('./pages/sessions.tsx').then((m) => m.SessionsPage));

function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>
        No console page has this address. <a href={paths.workspaces}>Go to the workspaces</a>.
      </p>
    </>
  );
}

const W = `${BASE}/workspaces/:workspace`;

function SignedIn() {
  return (
    <ErrorBoundary>
      <Router>
        <Route path={`${BASE}/`} component={WorkspacesPage} />
        <Route path={`${BASE}/workspaces`} component={WorkspacesPage} />
        <Route path={W} component={WorkspacePage} />
        <Route path={`${W}/services`} component={ServicesPage} />
        <Route path={`${W}/layers`} component={WorkspaceLayersPage} />
        <Route path={`${W}/services/:service`} component={ServicePage} />
        <Route path={`${W}/services/:service/layers`} component={LayersPage} />
        <Route path={`${W}/services/:service/layers/:layer`} component={LayerPage} />
        <Route path={`${W}/services/:service/mosaic`} component={MosaicPage} />
        <Route path={`${W}/layer-groups`} component={LayerGroupsPage} />
        <Route path={`${W}/styles`} component={StylesPage} />
        <Route path={`${W}/style-assets`} component={StyleAssetsPage} />
        <Route path={`${W}/settings`} component={SettingsPage} />
        <Route path={`${W}/tile-cache`} component={TileCachePage} />
        <Route path={`${W}/imports`} component={ImportsPage} />
        <Route path={`${W}/imports/:import`} component={ImportPage} />
        <Route path={`${W}/apikeys`} component={ApiKeysPage} />
        <Route path={`${W}/claim-mappings`} component={ClaimMappingsPage} />
        <Route path={`${W}/audit`} component={AuditPage} />
        <Route path={`${BASE}/deletions`} component={DeletionsPage} />
        <Route path={`${BASE}/deletions/:id`} component={DeletionPage} />
        <Route path={`${BASE}/tile-matrix-sets`} component={TileMatrixSetsPage} />
        <Route path={`${BASE}/roles`} component={RolesPage} />
        <Route path={`${BASE}/claim-mappings`} component={ClaimMappingsPage} />
        <Route path={`${BASE}/audit`} component={AuditPage} />
        <Route path={`${BASE}/integrity`} component={IntegrityPage} />
        <Route path={`${BASE}/caches`} component={CachesPage} />
        <Route path={`${BASE}/sessions`} component={SessionsPage} />
        <Route default component={NotFound} />
      </Router>
    </ErrorBoundary>
  );
}

function App() {
  const me = useSession();
  const { path, query, route } = useLocation();
  useEffect(() => {
    if (me === undefined && path !== paths.callback) void load().catch(() => undefined);
  }, [me, path]);
  // Signed in on the login page (or signed out anywhere else): go where the session says.
  useEffect(() => {
    if (me && path === paths.login) route(nextOf(query), true);
    if (me === null && path !== paths.login && path !== paths.callback)
      route(`${paths.login}?next=${encodeURIComponent(path)}`, true);
  }, [me, path, query, route]);
  if (path === paths.callback) return <CallbackPage />;
  // Signed out away from the login page: the effect above is about to move there with `next`; the
  // login form shows only at its own path, so whatever it reads from the URL is already right.
  if (me === undefined || (me === null && path !== paths.login))
    return (
      <>
        <RateLimitNotice />
        <p class="loading">Loading…</p>
      </>
    );
  if (me === null) return <LoginPage />;
  return (
    <Shell me={me}>
      <SignedIn />
    </Shell>
  );
}

function Root() {
  return (
    <LocationProvider>
      <App />
    </LocationProvider>
  );
}

const mount = document.getElementById('app');
if (mount) render(<Root />, mount);
