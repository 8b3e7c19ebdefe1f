import { getMosaic as operation } from '../../shared/api/operations/mosaics.ts';
import { getMosaic } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service }) =>
  ok(await getMosaic({ mosaics: mosaicRepository() }, { service })),
);
