import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '#domain/errors.ts';
import { type Granule, type MosaicRepository, removeGranule, requireGranule } from '#domain/mosaics.ts';
import type { Service } from '#domain/services.ts';
import { barrier } from '../support/barrier.ts';

/*
 * getMosaicGranule and deleteMosaicGranule read the mosaic's generation and the granule together
 * (ADR 0154): each read waits until the other has started, so reads made in turn never get there
 * and the test times out.
 */

const service = {
  id: randomUUID(),
  workspace_id: randomUUID(),
  name: 'scenes',
  type: 'raster_mosaic',
  status: 'active',
} as unknown as Service;

function repoWith(granule: Granule | undefined, generation: number, commits: string[]) {
  const { wait: meet } = barrier(2);
  return {
    state: async () => {
      await meet();
      return { generation, granule_count: 2 };
    },
    findGranule: async () => {
      await meet();
      return granule;
    },
    commitRemoval: async (_s: Service, base: { generation: number }, id: string) => {
      commits.push(`${id}@${base.generation}`);
      return 'ok' as const;
    },
  } as unknown as MosaicRepository;
}

const granuleOf = (added: number, removed?: number): Granule =>
  ({
    id: randomUUID(),
    workspace_id: service.workspace_id,
    service_id: service.id,
    source_uri: 's3://bucket/a.tif',
    added_generation: added,
    ...(removed !== undefined ? { removed_generation: removed } : {}),
    created_at: new Date().toISOString(),
  }) as Granule;

describe('a granule and its mosaic’s generation, read together', () => {
  it('getMosaicGranule answers an active granule and 404 for one the generation no longer holds', async () => {
    const active = granuleOf(1);
    expect(await requireGranule({ mosaics: repoWith(active, 2, []) }, { service, granule: active.id })).toBe(
      active,
    );
    const removed = granuleOf(1, 2);
    await expect(
      requireGranule({ mosaics: repoWith(removed, 2, []) }, { service, granule: removed.id }),
    ).rejects.toBeInstanceOf(NotFoundError);
  }, 2_000);

  it('deleteMosaicGranule commits the removal on the generation it read', async () => {
    const g = granuleOf(1);
    const commits: string[] = [];
    await removeGranule({ mosaics: repoWith(g, 3, commits) }, { service, granule: g.id.toUpperCase() });
    expect(commits).toEqual([`${g.id}@3`]);
  }, 2_000);
});
