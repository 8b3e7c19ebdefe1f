import { updateStyle as operation } from '#api/operations/styles.ts';
import { presentStyle, updateStyle } from '#domain/styles.ts';
import { ok } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
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
