import { updateLayer as operation } from '#api/operations/layers.ts';
import { presentLayer, updateLayer } from '#domain/layers.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { postgisGateway, secretBox } from '#wiring/datasources.ts';
import { layerRepository } from '#wiring/repositories.ts';

// Nothing is preloaded (ADR 0100, amended 2026-12-01): most updates change what the catalog holds
// (title, style, description) and reach neither PostGIS nor the SQL parser; enabling a draft,
// changing a source or an SQL view loads what it needs on its first use.

export const handler = makeChangeHandler(operation, async ({ service, params, body, ifMatch }) =>
  ok(
    presentLayer(
      await updateLayer(
        { layers: layerRepository(), gateway: postgisGateway, secrets: secretBox() },
        { service, layer: params.layer, body, ifMatch },
      ),
    ),
  ),
);
