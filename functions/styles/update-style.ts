import { updateStyle as operation } from '../../shared/api/operations/styles.ts';
import { presentStyle, requireStyle, updateStyle } from '../../shared/domain/styles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { styleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) => {
  const styles = styleRepository();
  const current = await requireStyle(styles, workspace.id, params.style);
  return ok(presentStyle(await updateStyle(styles, current, body, ifMatch)));
});
