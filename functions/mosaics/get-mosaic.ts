import { getMosaic as operation } from '#api/operations/mosaics.ts';
import { getMosaic } from '#domain/mosaics.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service }) =>
  ok(await getMosaic({ mosaics: mosaicRepository() }, { service })),
);
