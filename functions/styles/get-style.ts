import { getStyle as operation } from '../../shared/api/operations/styles.ts';
import { presentStyle, requireStyle } from '../../shared/domain/styles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { styleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentStyle(await requireStyle(styleRepository(), workspace.id, params.style))),
);
