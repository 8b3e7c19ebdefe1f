import { getImport as operation } from '#api/operations/imports.ts';
import { presentImport, requireImport } from '#domain/imports.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { importRepository } from '#wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentImport(await requireImport(importRepository(), workspace.id, params.import))),
);
