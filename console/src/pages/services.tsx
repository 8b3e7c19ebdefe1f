/**
 * Services of a workspace: the paged list and registering a PostGIS data source (or a raster
 * mosaic). One service: describe, test its connection, edit (If-Match), discover its tables and
 * publish them as layers, validate an SQL view and publish it, delete (the plan shown first). The
 * parts live in ./services/.
 */
import './services.css';

export { ServicesPage } from './services/list-page.tsx';
export { ServicePage } from './services/service-page.tsx';
