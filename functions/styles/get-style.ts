import { getStyle as operation } from '#api/operations/styles.ts';
import { getStyle, presentStyle } from '#domain/styles.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { styleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(
    presentStyle(
      await getStyle({ styles: styleRepository() }, { workspaceId: workspace.id, style: params.style }),
    ),
  ),
);
