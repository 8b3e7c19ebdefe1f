import { deleteStyle as operation } from '#api/operations/styles.ts';
import { deleteStyle } from '#domain/styles.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { styleRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteStyle(
    { styles: styleRepository() },
    { workspaceId: workspace.id, style: params.style, ifMatch },
  );
  return noContent();
});
