import { deleteStyle as operation } from '../../shared/api/operations/styles.ts';
import { deleteStyle } from '../../shared/domain/styles.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { styleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteStyle(
    { styles: styleRepository() },
    { workspaceId: workspace.id, style: params.style, ifMatch },
  );
  return noContent();
});
