import { getImport as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, requireImport } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentImport(await requireImport(importRepository(), workspace.id, params.import))),
);
