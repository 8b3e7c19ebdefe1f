import { getMosaicGranule as operation } from '#api/operations/mosaics.ts';
import { presentGranule, requireGranule } from '#domain/mosaics.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, params }) => {
  return ok(
    presentGranule(
      await requireGranule({ mosaics: mosaicRepository() }, { service, granule: params.granule }),
    ),
  );
});
