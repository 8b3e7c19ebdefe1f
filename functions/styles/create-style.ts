import { createStyle as operation } from '../../shared/api/operations/styles.ts';
import { createStyle, presentStyle } from '../../shared/domain/styles.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { created } from '../../shared/http/responses.ts';
import { styleRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, body }) => {
  const style = await createStyle(styleRepository(), workspace.id, body);
  return created(
    presentStyle(style),
    `/api/v1/workspaces/${workspace.id}/styles/${encodeURIComponent(style.name)}`,
  );
});
