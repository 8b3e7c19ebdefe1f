/** The bodies the CLI reads: the generated client's schemas (client/api-types.ts, ADR 0096). */

import type { Schemas } from '#client/index.ts';

export type ImportJob = Schemas['ImportJob'];
export type ImportStatus = ImportJob['status'];
/** The presigned form an import is uploaded with (any file field name: the form is S3's, not the API's). */
export type UploadTicket = Omit<NonNullable<ImportJob['upload']>, 'file_field'> & { file_field: string };
export type ImportEvent = Schemas['ImportEvent'];
export type DeletionOperation = Schemas['DeletionOperation'];
export type Layer = Schemas['Layer'];
export type ImportList = Schemas['ImportList'];
export type Service = Schemas['Service'];
