import { locationOf } from '../../shared/api/operation.ts';
import { getStyle, createStyle as operation } from '../../shared/api/operations/styles.ts';
import { createStyle, presentStyle } from '../../shared/domain/styles.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { styleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body }) => {
  const style = await createStyle(styleRepository(), workspace.id, body);
  return created(presentStyle(style), locationOf(getStyle, { workspace: workspace.id, style: style.name }));
});
