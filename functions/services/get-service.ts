import { getService as operation } from '#api/operations/services.ts';
import { presentService } from '#domain/services.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';

export const handler = makeHandler(operation, async (request) => ok(presentService(request.service)));
