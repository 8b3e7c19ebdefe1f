import { updateStyle as operation } from '#api/operations/styles.ts';
import { presentStyle, updateStyle } from '#domain/styles.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { styleRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) =>
  ok(
    presentStyle(
      await updateStyle(
        { styles: styleRepository() },
        { workspaceId: workspace.id, style: params.style, body, ifMatch },
      ),
    ),
  ),
);
