/**
 * A workspace's service settings: WMS, OGC API Features and OGC API Tiles, WFS, WCS and WMTS, one
 * form each (./settings/). Each document is read with its ETag (its version, "0" while the defaults
 * apply) and replaced whole with If-Match. Limits show their server ceiling as a hint (and as the
 * number input's max); the API still decides, and its refusal is shown beside the field it names.
 */
import './settings.css';
import { useRoute } from 'preact-iso';
import { PageTitle } from '#console/components/page-parts.tsx';
import { OGCAPISettingsForm, TilesSettingsForm } from './settings/ogc-api-settings.tsx';
import { WCSSettingsForm, WFSSettingsForm, WMTSSettingsForm } from './settings/protocol-settings.tsx';
import { WMSSettingsForm } from './settings/wms-settings.tsx';

export function SettingsPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  return (
    <>
      <PageTitle title={`Settings · ${workspace}`}>Settings of {workspace}</PageTitle>
      <p>
        Each service's settings are one document, saved whole. Reading them needs the viewer role; saving
        needs the admin role in this workspace.
      </p>
      <WMSSettingsForm workspace={workspace} />
      <OGCAPISettingsForm workspace={workspace} />
      <TilesSettingsForm workspace={workspace} />
      <WFSSettingsForm workspace={workspace} />
      <WCSSettingsForm workspace={workspace} />
      <WMTSSettingsForm workspace={workspace} />
    </>
  );
}
