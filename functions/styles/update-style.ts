import { updateStyle as operation } from '../../shared/api/operations/styles.ts';
import { presentStyle, updateStyle } from '../../shared/domain/styles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { styleRepository } from '../../shared/wiring/repositories.ts';

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
