import { getService as operation } from '../../shared/api/operations/services.ts';
import { presentService } from '../../shared/domain/services.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';

export const handler = makeHandler(operation, async (request) => ok(presentService(request.service)));
