/**
 * Imports of a workspace (ADR 0083): the list, a new import (drop or choose a file → createImport
 * → the file POSTed to its upload ticket with the bytes shown as they go → startImport), and one
 * import's page — status and phase with live progress while a workflow works on it, what discovery
 * found, a preview of the staged features, the plan (names, fields, CRS, make-valid), publish,
 * cancel, retry, rollback (through the deletion workflow, whose progress shows here) and the
 * history as a timeline. The parts live in ./imports/.
 */
import './imports.css';

export { ImportPage } from './imports/job-page.tsx';
export { ImportsPage } from './imports/list-page.tsx';
