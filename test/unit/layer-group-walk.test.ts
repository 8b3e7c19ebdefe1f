import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type LayerGroup,
  type LayerGroupRepository,
  updateLayerGroup,
  type VisitedGroup,
} from '#domain/layer-groups.ts';
import type { LayerRepository, PublicIdMarker } from '#domain/layers.ts';

/*
 * updateLayerGroup walks the groups its members reach (cycles, depth) reading a few members'
 * public id markers together, then the groups they name (ADR 0154), and judges them in order.
 */

const WS = randomUUID();

/** A workspace of layers and groups by public id, counting the reads in flight at once. */
function catalog(groups: Record<string, string[]>, layerIds: string[]) {
  const byPublicId = new Map<string, LayerGroup>();
  for (const [publicId, members] of Object.entries(groups)) {
    byPublicId.set(publicId, {
      id: randomUUID(),
      workspace_id: WS,
      public_id: publicId,
      title: publicId,
      members: members.map((resource) => ({ resource })),
      version: 1,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });
  }
  const byId = new Map([...byPublicId.values()].map((g) => [g.id, g]));
  const reads = { markers: 0, groups: 0, most: 0, inFlight: 0 };
  const counted = async <T>(kind: 'markers' | 'groups', value: T): Promise<T> => {
    reads[kind] += 1;
    reads.inFlight += 1;
    reads.most = Math.max(reads.most, reads.inFlight);
    await new Promise((resolve) => setTimeout(resolve, 2));
    reads.inFlight -= 1;
    return value;
  };
  const layers = {
    findPublicId: (_ws: string, publicId: string) => {
      const group = byPublicId.get(publicId);
      const marker: PublicIdMarker | undefined = group
        ? { kind: 'group', target_id: group.id, member_of_count: 0 }
        : layerIds.includes(publicId)
          ? { kind: 'layer', target_id: randomUUID(), service_id: randomUUID(), member_of_count: 0 }
          : undefined;
      return counted('markers', marker);
    },
  } as unknown as LayerRepository;
  const written: { next?: LayerGroup; visited?: VisitedGroup[] } = {};
  const repo = {
    find: (_ws: string, id: string) => counted('groups', byId.get(id)),
    update: async (_previous: LayerGroup, next: LayerGroup, visited: VisitedGroup[]) => {
      written.next = next;
      written.visited = visited;
    },
  } as unknown as LayerGroupRepository;
  return { byPublicId, layers, repo, reads, written };
}

const update = (c: ReturnType<typeof catalog>, group: string, members: string[]) =>
  updateLayerGroup(
    { groups: c.repo, layers: c.layers },
    {
      workspaceId: WS,
      group: (c.byPublicId.get(group) as LayerGroup).id,
      body: { public_id: group, members: members.map((resource) => ({ resource })) },
    },
  );

describe('updateLayerGroup walks the members a few at a time', () => {
  it('reads 40 layer members’ markers 16 at a time, not one after another', async () => {
    const layerIds = Array.from({ length: 40 }, (_, i) => `layer-${i}`);
    const c = catalog({ g: ['layer-0'] }, layerIds);
    const next = await update(c, 'g', layerIds);
    expect(next.members).toHaveLength(40);
    expect(c.reads.markers).toBe(40);
    expect(c.reads.most).toBe(16);
    expect(c.written.visited).toEqual([]);
  });

  it('walks nested groups level by level and hands every group it read to the write', async () => {
    const c = catalog({ top: ['a'], a: ['l1'], b: ['c', 'l2'], c: ['l3'] }, ['l1', 'l2', 'l3']);
    await update(c, 'top', ['b', 'l1']);
    const ids = (name: string) => (c.byPublicId.get(name) as LayerGroup).id;
    expect(c.written.visited?.map((v) => v.id)).toEqual([ids('b'), ids('c')]);
  });

  it('judges in the order of the walk one member at a time: a cycle or the depth, whichever comes first', async () => {
    const c = catalog({ top: ['l1'], a: ['b'], b: ['top'] }, ['l1']);
    await expect(update(c, 'top', ['l1', 'a'])).rejects.toMatchObject({ reason: 'group_cycle' });

    // h1 holds 40 groups, h2 holds the group being changed: the second level lists them in the
    // order of top's members, and the 41st group visited (too deep) or `top` (a cycle) comes first.
    const forty = Array.from({ length: 40 }, (_, i) => `g${i}`);
    const groups: Record<string, string[]> = { top: ['l1'], h1: forty, h2: ['top'] };
    for (const g of forty) groups[g] = ['l1'];
    const deepFirst = catalog(groups, ['l1']);
    await expect(update(deepFirst, 'top', ['h1', 'h2'])).rejects.toMatchObject({ reason: 'group_too_deep' });
    const cycleFirst = catalog(groups, ['l1']);
    await expect(update(cycleFirst, 'top', ['h2', 'h1'])).rejects.toMatchObject({ reason: 'group_cycle' });
    // The group itself, h2 and h1: the cycle was found before any of the forty were read.
    expect(cycleFirst.reads.groups).toBe(3);
  });
});
