import { deleteStyle as operation } from '../../shared/api/operations/styles.ts';
import { deleteStyle, requireStyle } from '../../shared/domain/styles.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { styleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  const styles = styleRepository();
  await deleteStyle(styles, await requireStyle(styles, workspace.id, params.style), ifMatch);
  return noContent();
});
