import { getMosaic as operation } from '#api/operations/mosaics.ts';
import { getMosaic } from '#domain/mosaics.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service }) =>
  ok(await getMosaic({ mosaics: mosaicRepository() }, { service })),
);
