import { describe, expect, it } from 'vitest';
import { type Key, keyOf, keys, parseKey } from '#store/keys.ts';
import {
  attributes,
  gsi1,
  gsi2,
  itemAbsent,
  itemExists,
  keyAttributes,
  tableDefinition,
} from '#store/table.ts';

/** Ids and names as the API lets them through: UUIDs, names with dots, dashes, unicode, and empty. */
const ids = ['7c1e4a52-2f0e-4b7e-9b6f-0d2c8e7f1a00', 'roads', 'a.b-c_d', 'straße', ''];

describe('key builders', () => {
  it('put everything of a workspace in its WS# partition', () => {
    // Prepare
    const ws = 'w1';
    // Act
    const built: Key[] = [
      keys.workspace(ws),
      keys.apiKey(ws, 'k'),
      keys.claimMapping(ws, 'm'),
      keys.claimMappingTriple(ws, 'h'),
      keys.service(ws, 's'),
      keys.serviceName(ws, 'n'),
      keys.layer(ws, 's', 'l'),
      keys.layerGroup(ws, 'g'),
      keys.publicId(ws, 'p'),
      keys.settings(ws, 'wms'),
      keys.style(ws, 'st'),
      keys.styleAsset(ws, 'a'),
      keys.styleAssetChunk(ws, 'a', 'sha', 0),
      keys.styleAssetRef(ws, 'a', 'st'),
      keys.mosaic(ws, 's'),
      keys.mosaicGranule(ws, 's', 'g'),
      keys.activeDeletions(ws),
    ];
    // Assess
    for (const key of built) expect(key.PK).toBe(keys.workspacePartition(ws));
    expect(keys.workspacePartition(ws)).toBe('WS#w1');
    expect(keys.workspacePartition(ws).startsWith(keys.workspacePartitionPrefix)).toBe(true);
  });

  it('build each sort key with its prefix, the separator # and the parts verbatim', () => {
    expect(keys.workspace('w')).toEqual({ PK: 'WS#w', SK: 'WORKSPACE' });
    expect(keys.workspace('w').SK).toBe(keys.workspaceItemSortKey);
    expect(keys.workspaceName('My Name')).toEqual({ PK: 'WSNAME#My Name', SK: 'WSNAME' });
    expect(keys.apiKey('w', 'k')).toEqual({ PK: 'WS#w', SK: 'APIKEY#k' });
    expect(keys.apiKeyHash('ab12')).toEqual({ PK: 'APIKEYHASH#ab12', SK: 'APIKEYHASH' });
    expect(keys.role('r')).toEqual({ PK: 'ROLE#r', SK: 'ROLE' });
    expect(keys.rolePolicy('r', 'p')).toEqual({ PK: 'ROLE#r', SK: 'POLICY#p' });
    expect(keys.claimMapping('w', 'm')).toEqual({ PK: 'WS#w', SK: 'CLAIMMAP#m' });
    expect(keys.claimMappingTriple('w', 'h')).toEqual({ PK: 'WS#w', SK: 'CLAIMTRIPLE#h' });
    expect(keys.service('w', 's')).toEqual({ PK: 'WS#w', SK: 'SERVICE#s' });
    expect(keys.serviceName('w', 'n')).toEqual({ PK: 'WS#w', SK: 'SVCNAME#n' });
    expect(keys.layer('w', 's', 'l')).toEqual({ PK: 'WS#w', SK: 'LAYER#s#l' });
    expect(keys.layerGroup('w', 'g')).toEqual({ PK: 'WS#w', SK: 'GROUP#g' });
    expect(keys.publicId('w', 'p')).toEqual({ PK: 'WS#w', SK: 'PUBID#p' });
    expect(keys.session('h')).toEqual({ PK: 'SESSION#h', SK: 'SESSION' });
    expect(keys.idempotencyRecord('abc')).toEqual({ PK: 'IDEMPOTENCY#abc', SK: 'IDEMPOTENCY' });
    expect(keys.loginFailures('10.0.0.1', 42)).toEqual({ PK: 'LOGINFAIL#10.0.0.1', SK: 'WINDOW#42' });
    expect(keys.settings('w', 'ogc-tiles')).toEqual({ PK: 'WS#w', SK: 'SETTINGS#ogc-tiles' });
    expect(keys.tileMatrixSet('t')).toEqual({ PK: 'TMS#t', SK: 'TMS' });
    expect(keys.tileMatrixSetRef('t', 'w')).toEqual({ PK: 'TMS#t', SK: 'REF#w' });
    expect(keys.style('w', 's')).toEqual({ PK: 'WS#w', SK: 'STYLE#s' });
    expect(keys.styleAsset('w', 'a')).toEqual({ PK: 'WS#w', SK: 'ASSET#a' });
    expect(keys.styleAssetChunk('w', 'a', 'sha', 2)).toEqual({ PK: 'WS#w', SK: 'ASSETDATA#a#sha#2' });
    expect(keys.styleAssetRef('w', 'a', 's')).toEqual({ PK: 'WS#w', SK: 'ASSETREF#a#s' });
    expect(keys.mosaic('w', 's')).toEqual({ PK: 'WS#w', SK: 'MOSAIC#s' });
    expect(keys.mosaicGranule('w', 's', 'g')).toEqual({ PK: 'WS#w', SK: 'GRANULE#s#g' });
    expect(keys.deletion('d')).toEqual({ PK: 'DELETION#d', SK: 'DELETION' });
    expect(keys.deletionPlan('d')).toEqual({ PK: 'DELETION#d', SK: 'PLAN' });
    expect(keys.activeDeletions('w')).toEqual({ PK: 'WS#w', SK: 'ACTIVEDELETIONS' });
  });

  it('put global API keys, claim mappings and their triples in the GLOBAL partition', () => {
    expect(keys.apiKey(undefined, 'k')).toEqual({ PK: 'GLOBAL', SK: 'APIKEY#k' });
    expect(keys.claimMapping(undefined, 'm')).toEqual({ PK: 'GLOBAL', SK: 'CLAIMMAP#m' });
    expect(keys.claimMappingTriple(undefined, 'h')).toEqual({ PK: 'GLOBAL', SK: 'CLAIMTRIPLE#h' });
  });

  it('build the GSI1 listings and their partitions', () => {
    expect(keys.workspaceListing('n')).toEqual({ GSI1PK: keys.workspaceListingPartition, GSI1SK: 'n' });
    expect(keys.roleListing('r')).toEqual({ GSI1PK: keys.roleListingPartition, GSI1SK: 'r' });
    expect(keys.tileMatrixSetListing('t')).toEqual({
      GSI1PK: keys.tileMatrixSetListingPartition,
      GSI1SK: 't',
    });
    expect(keys.deletionListing('2024-01-01T00:00:00Z', 'd')).toEqual({
      GSI1PK: keys.deletionListingPartition,
      GSI1SK: '2024-01-01T00:00:00Z#d',
    });
    expect(keys.claimMappingByClaim('dig', 'w', 'm')).toEqual({ GSI1PK: 'CLAIM#dig', GSI1SK: 'w#m' });
    expect(keys.claimMappingByClaimPartition('dig')).toBe(keys.claimMappingByClaim('dig', 'w', 'm').GSI1PK);
  });

  it('spread the global audit listing over 16 shards by record id, and list the old partition too (ADR 0113)', () => {
    const ids = Array.from(
      { length: 1600 },
      (_, i) => `0195${String(i).padStart(4, '0')}-7b2e-4c1d-9e4f-5a6b7c8d9e0f`,
    );
    const entries = ids.map((id) => keys.auditListing('2026-03-01T00:00:00.000Z', id));
    // The same record always lands on the same shard; its sort key is unchanged.
    expect(keys.auditListing('2026-03-01T00:00:00.000Z', ids[7] as string)).toEqual(entries[7]);
    expect(entries[7]?.GSI1SK).toBe(`2026-03-01T00:00:00.000Z#${ids[7]}`);
    const counts = new Map<string, number>();
    for (const e of entries) counts.set(e.GSI1PK, (counts.get(e.GSI1PK) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(Array.from({ length: 16 }, (_, n) => `AUDIT#${n}`).sort());
    // Evenly enough: no shard takes more than twice its share.
    for (const count of counts.values()) expect(count).toBeLessThan(200);
    expect(keys.auditListingPartitions).toEqual([
      ...[...counts.keys()].sort((a, b) => Number(a.slice(6)) - Number(b.slice(6))),
      'AUDIT',
    ]);
    expect(keys.auditUnshardedPartition).toBe('AUDIT');
  });

  it('put an active deletion on the sparse GSI2 listing, by creation time (ADR 0113)', () => {
    expect(keys.deletionActive('2024-01-01T00:00:00Z', 'd')).toEqual({
      GSI2PK: keys.deletionActivePartition,
      GSI2SK: '2024-01-01T00:00:00Z#d',
    });
    expect(keys.deletionActivePartition).not.toBe(keys.deletionListingPartition);
  });

  it('give prefixes that every key they stand for starts with (and no key of a sibling)', () => {
    expect(keys.apiKey('w', 'k').SK.startsWith(keys.apiKeyPrefix)).toBe(true);
    expect(keys.rolePolicy('r', 'p').SK.startsWith(keys.rolePolicyPrefix)).toBe(true);
    expect(keys.role('r').PK.startsWith(keys.rolePartitionPrefix)).toBe(true);
    expect(keys.role('r').SK).toBe(keys.roleSortKey);
    expect(keys.claimMapping('w', 'm').SK.startsWith(keys.claimMappingPrefix)).toBe(true);
    expect(keys.claimMappingTriple('w', 'h').SK.startsWith(keys.claimMappingPrefix)).toBe(false);
    expect(keys.service('w', 's').SK.startsWith(keys.servicePrefix)).toBe(true);
    expect(keys.serviceName('w', 's').SK.startsWith(keys.servicePrefix)).toBe(false);
    expect(keys.layer('w', 's', 'l').SK.startsWith(keys.layerPrefix('s'))).toBe(true);
    expect(keys.layer('w', 's', 'l').SK.startsWith(keys.layerPrefixAll)).toBe(true);
    // A service id that is a prefix of another's never pulls in its layers (the separator ends it).
    expect(keys.layer('w', 's10', 'l').SK.startsWith(keys.layerPrefix('s1'))).toBe(false);
    expect(keys.layerGroup('w', 'g').SK.startsWith(keys.layerGroupPrefix)).toBe(true);
    expect(keys.publicId('w', 'p').SK.startsWith(keys.publicIdPrefix)).toBe(true);
    expect(keys.settings('w', 'wms').SK.startsWith(keys.settingsPrefix)).toBe(true);
    expect(keys.tileMatrixSet('t').SK).toBe(keys.tileMatrixSetSortKey);
    expect(keys.tileMatrixSetRef('t', 'w').PK).toBe(keys.tileMatrixSetPartition('t'));
    expect(keys.tileMatrixSetRef('t', 'w').SK.startsWith(keys.tileMatrixSetRefPrefix)).toBe(true);
    expect(keys.style('w', 's').SK.startsWith(keys.stylePrefix)).toBe(true);
    expect(keys.styleAsset('w', 'a').SK.startsWith(keys.styleAssetPrefix)).toBe(true);
    expect(keys.styleAssetRef('w', 'a', 's').SK.startsWith(keys.styleAssetRefPrefix('a'))).toBe(true);
    expect(keys.styleAssetRef('w', 'ab', 's').SK.startsWith(keys.styleAssetRefPrefix('a'))).toBe(false);
    expect(keys.mosaicGranule('w', 's', 'g').SK.startsWith(keys.mosaicGranulePrefix('s'))).toBe(true);
    expect(keys.deletion('d').PK.startsWith(keys.deletionPartitionPrefix)).toBe(true);
    expect(keys.deletionPlan('d').PK).toBe(keys.deletion('d').PK);
    expect(keys.deletionPlan('d').SK).not.toBe(keys.deletion('d').SK);
    expect(keys.partitionStart).toBe('');
  });
});

describe('key parsers', () => {
  it.each(ids)('round-trip a workspace id through its partition (%j)', (id) => {
    expect(parseKey.workspaceId(keys.workspacePartition(id))).toBe(id);
    expect(parseKey.workspaceId(keys.service(id, 's').PK)).toBe(id);
  });

  it.each(ids)('round-trip a public id through its marker sort key (%j)', (publicId) => {
    expect(parseKey.publicId(keys.publicId('w', publicId).SK)).toBe(publicId);
  });

  it.each(ids)('round-trip a deletion id through the operation and plan partitions (%j)', (id) => {
    expect(parseKey.deletionId(keys.deletion(id).PK)).toBe(id);
    expect(parseKey.deletionId(keys.deletionPlan(id).PK)).toBe(id);
  });

  it('keep a # inside an id verbatim (only the prefix is cut)', () => {
    expect(parseKey.publicId(keys.publicId('w', 'a#b').SK)).toBe('a#b');
    expect(parseKey.deletionId(keys.deletion('x#y').PK)).toBe('x#y');
    expect(parseKey.workspaceId(keys.workspacePartition('WS#nested'))).toBe('WS#nested');
  });

  it('refuse a key of another kind (a bug, never data)', () => {
    expect(() => parseKey.publicId(keys.layerGroup('w', 'g').SK)).toThrow(/PUBID#/);
    expect(() => parseKey.deletionId(keys.workspacePartition('w'))).toThrow(/DELETION#/);
    expect(() => parseKey.workspaceId('GLOBAL')).toThrow(/WS#/);
  });

  it('read an item’s primary key and nothing else', () => {
    const item = { ...keys.layer('w', 's', 'l'), ...keys.workspaceListing('n'), entity: 'Layer', id: 'l' };
    expect(keyOf(item)).toEqual(keys.layer('w', 's', 'l'));
  });
});

describe('table attributes', () => {
  it('name the key attributes of the table definition and the key builders', () => {
    expect(attributes.pk).toBe(tableDefinition.partitionKey);
    expect(attributes.sk).toBe(tableDefinition.sortKey);
    expect(gsi1).toBe(tableDefinition.globalSecondaryIndexes[0].indexName);
    expect(Object.keys(keys.workspace('w')).sort()).toEqual([attributes.pk, attributes.sk].sort());
    expect(Object.keys(keys.workspaceListing('n')).sort()).toEqual(
      [attributes.gsi1pk, attributes.gsi1sk].sort(),
    );
    expect(gsi2).toBe(tableDefinition.globalSecondaryIndexes[1].indexName);
    expect(Object.keys(keys.deletionActive('t', 'd')).sort()).toEqual(
      [attributes.gsi2pk, attributes.gsi2sk].sort(),
    );
    expect(keyAttributes).toEqual(['PK', 'SK', 'GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK']);
    expect(itemExists).toBe('attribute_exists(PK)');
    expect(itemAbsent).toBe('attribute_not_exists(PK)');
  });
});
