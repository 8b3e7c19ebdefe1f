import { getService as operation } from '#api/operations/services.ts';
import { presentService } from '#domain/services.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';

export const handler = makeHandler(operation, async (request) => ok(presentService(request.service)));
