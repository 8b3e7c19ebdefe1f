/**
 * The raster mosaic of a `raster_mosaic` service: its active generation, harvesting GeoTIFF/COG
 * sources under its root (the answer shown), harvest jobs for whole roots (progress polled, a
 * cancel button; ADR 0136), and the paged granules, each removable (If-Match).
 */
import { useRoute } from 'preact-iso';
import { api, call } from '#console/api.ts';
import { Loaded, useLoad } from '#console/components/data.tsx';
import { PageTitle, When } from '#console/components/page-parts.tsx';
import { paths } from '#console/routes.ts';
import { Granules } from './mosaic/granules.tsx';
import { HarvestForm } from './mosaic/harvest-form.tsx';
import { HarvestJobs } from './mosaic/harvest-jobs.tsx';
import './services.css';

export function MosaicPage() {
  const { params } = useRoute();
  const workspace = params.workspace as string;
  const service = params.service as string;
  const mosaic = useLoad(
    () =>
      call(
        api.GET('/api/v1/workspaces/{workspace}/services/{service}/mosaic', {
          params: { path: { workspace, service } },
        }),
      ),
    [workspace, service],
  );
  const reload = () => void mosaic.reload();
  return (
    <>
      <PageTitle title={`Mosaic of ${service}`}>Mosaic of {service}</PageTitle>
      <p>
        <a href={paths.service(workspace, service)}>Service {service}</a> ·{' '}
        <a href={paths.layers(workspace, service)}>Layers of {service}</a>
      </p>
      <Loaded state={mosaic}>
        {(data) => (
          <>
            <dl class="facts">
              <dt>Root</dt>
              <dd>
                <code>{data.root_uri}</code>
              </dd>
              <dt>Generation</dt>
              <dd>{data.generation}</dd>
              <dt>Granules</dt>
              <dd>{data.granule_count}</dd>
              <dt>Updated</dt>
              <dd>
                <When at={data.updated_at} />
              </dd>
            </dl>
            <HarvestForm workspace={workspace} service={service} onHarvested={reload} />
            <HarvestJobs workspace={workspace} service={service} onProgress={reload} />
            <Granules
              workspace={workspace}
              service={service}
              generation={data.generation}
              onChanged={reload}
            />
          </>
        )}
      </Loaded>
    </>
  );
}
