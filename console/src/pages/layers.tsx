/**
 * Layers of a service: the paged list with a search, enabling or disabling a layer (If-Match),
 * deleting one. One layer: its fields, a map of it drawn from its own vector tiles, its OGC API
 * URLs, an edit form, delete. The parts live in ./layers/.
 */
import './services.css';

export { LayerPage } from './layers/layer-page.tsx';
export { LayersPage } from './layers/list-page.tsx';
