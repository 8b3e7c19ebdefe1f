import { getStyle as operation } from '#api/operations/styles.ts';
import { presentStyle, requireStyle } from '#domain/styles.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { styleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentStyle(await requireStyle(styleRepository(), workspace.id, params.style))),
);
