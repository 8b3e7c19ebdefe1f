import { locationOf } from '#api/operation.ts';
import { getStyle, createStyle as operation } from '#api/operations/styles.ts';
import { createStyle, presentStyle } from '#domain/styles.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { styleRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, body }) => {
  const style = await createStyle({ styles: styleRepository() }, { workspaceId: workspace.id, body });
  return created(presentStyle(style), locationOf(getStyle, { workspace: workspace.id, style: style.name }));
});
