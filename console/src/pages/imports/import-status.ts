/** What an import's status and phase say: whether a workflow owns it, what can be previewed, cancelled. */
import { IMPORT_STATUSES, type Schemas } from '#console/api.ts';

export type ImportJob = Schemas['ImportJob'];
export type ImportStatus = ImportJob['status'];
export type ImportPlan = Schemas['ImportPlan'];
export type LayerPlan = ImportPlan['layers'][number];

export const STATUSES = IMPORT_STATUSES;
/** A workflow owns the job: its status and counters move on their own. */
export const WORKING: ImportStatus[] = ['queued', 'running', 'publishing', 'cancelling', 'rolling_back'];
/** Features are staged (or published) and can be previewed. */
export const STAGED: ImportStatus[] = ['running', 'ready_to_publish', 'publishing', 'published'];
export const NOT_CANCELLABLE: ImportStatus[] = [
  'publishing',
  'published',
  'rolling_back',
  'rolled_back',
  'cancelling',
  'cancelled',
];
/** The plan can change (before the import publishes anything). */
export const PLANNABLE: ImportStatus[] = ['awaiting_plan', 'ready_to_publish', 'failed'];
/** Nothing is left to do. */
export const FINISHED: ImportStatus[] = ['cancelled', 'rolled_back'];

export const working = (job: ImportJob) => WORKING.includes(job.status);
/** The phases in which the workflow is still reading the file (nothing can be staged yet). */
const READING: ImportJob['phase'][] = ['acquire', 'upload', 'discover'];
/** Every planned feature is loaded (the counters may say less: the bar is full). */
export const LOADED: ImportStatus[] = ['ready_to_publish', 'publishing', 'published'];
/** The service the import published may be gone (rolled back, or deleted on its own). */
export const UNPUBLISHED: ImportStatus[] = ['rolling_back', 'rolled_back'];
export const reading = (job: ImportJob) => job.status === 'running' && READING.includes(job.phase);

/** The path parameters of one import's operations. */
export function importPath(workspace: string, id: string) {
  return { params: { path: { workspace, import: id } } };
}
