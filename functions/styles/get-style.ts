import { getStyle as operation } from '../../shared/api/operations/styles.ts';
import { presentStyle, requireStyle } from '../../shared/domain/styles.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { styleRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentStyle(await requireStyle(styleRepository(), workspace.id, params.style))),
);
