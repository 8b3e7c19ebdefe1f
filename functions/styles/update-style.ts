import { updateStyle as operation } from '../../shared/api/operations/styles.ts';
import { presentStyle, requireStyle, updateStyle } from '../../shared/domain/styles.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { styleRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params, body, ifMatch }) => {
  const styles = styleRepository();
  const current = await requireStyle(styles, workspace.id, params.style);
  return ok(presentStyle(await updateStyle(styles, current, body, ifMatch)));
});
