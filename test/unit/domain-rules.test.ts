/**
 * The rules that decide why a conditioned write was refused (ADR 0081): the store reports what it
 * found after the condition failed, these domain functions choose the error.
 */
import { describe, expect, it } from 'vitest';
import {
  DependencyConflictError,
  type DomainError,
  NotFoundError,
  StateConflictError,
} from '#domain/errors.ts';
import { type Role, roleRetireRefusal } from '#domain/roles.ts';
import {
  assetDeleteRefusal,
  deleteStyleAsset,
  type StyleAsset,
  type StyleAssetRepository,
} from '#domain/style-assets.ts';
import { deleteStyle, type Style, type StyleRepository, styleChangeRefusal } from '#domain/styles.ts';
import { type TileMatrixSetRecord, tileMatrixSetDeleteRefusal } from '#domain/tile-matrix-sets.ts';
import { workspaceNotEmpty } from '#domain/workspaces.ts';

const at = '2024-01-01T00:00:00.000Z';

const asset: StyleAsset = {
  id: 'a1',
  workspace_id: 'w1',
  name: 'pin',
  content_type: 'image/png',
  size_bytes: 10,
  sha256: 'x',
  version: 3,
  created_at: at,
  updated_at: at,
};

function shape(error: unknown) {
  const e = error as DomainError;
  return { class: e.constructor.name, reason: e.reason, message: e.message, extra: e.extra };
}

/** The error is a `kind` with these fields (class, reason, message, extra as the API returns them). */
function expectError(error: unknown, kind: abstract new (...args: never[]) => DomainError, fields: object) {
  expect(error).toBeInstanceOf(kind);
  expect(shape(error)).toMatchObject(fields);
}

describe('assetDeleteRefusal', () => {
  it('is a 404 when the asset is gone', () => {
    // Act
    const error = assetDeleteRefusal(asset, undefined);
    // Assess
    expectError(error, NotFoundError, {
      reason: 'style_asset_not_found',
      message: "Style asset 'pin' does not exist.",
    });
  });

  it('is a 409 naming the referencing style the store read', () => {
    const error = assetDeleteRefusal(asset, { count: 2, styles: ['roads'] });
    expectError(error, DependencyConflictError, {
      reason: 'asset_referenced',
      message: "Style asset 'pin' is referenced by style roads.",
      extra: { style: 'roads' },
    });
  });

  it("says 'another style' when the count is up but no reference was read", () => {
    const error = assetDeleteRefusal(asset, { count: 1, styles: [] });
    expect(shape(error).message).toBe("Style asset 'pin' is referenced by style another style.");
  });

  it('is a concurrent modification when nothing references it any more', () => {
    const error = assetDeleteRefusal(asset, { count: 0, styles: [] });
    expectError(error, StateConflictError, {
      reason: 'concurrent_modification',
      message: 'The asset was changed by another request; retry.',
    });
  });
});

describe('deleteStyleAsset', () => {
  function assets(removed: boolean, references = { count: 1, styles: ['roads'] }) {
    const calls: string[] = [];
    const repo = {
      remove: async () => {
        calls.push('remove');
        return removed;
      },
      referencesOf: async () => {
        calls.push('referencesOf');
        return references;
      },
      find: async () => asset,
    } as unknown as StyleAssetRepository;
    return { repo, calls };
  }

  it('reads nothing more when the delete went through', async () => {
    const { repo, calls } = assets(true);
    await deleteStyleAsset({ assets: repo }, { workspaceId: asset.workspace_id, asset: asset.name });
    expect(calls).toEqual(['remove']);
  });

  it('explains a refused delete from the references read afterwards', async () => {
    const { repo, calls } = assets(false);
    await expect(
      deleteStyleAsset({ assets: repo }, { workspaceId: asset.workspace_id, asset: asset.name }),
    ).rejects.toBeInstanceOf(DependencyConflictError);
    expect(calls).toEqual(['remove', 'referencesOf']);
  });
});

const style: Style = {
  id: 's1',
  workspace_id: 'w1',
  name: 'roads',
  format: 'mapbox',
  body: '{}',
  asset_refs: [],
  version: 4,
  created_at: at,
  updated_at: at,
};

describe('styleChangeRefusal', () => {
  it('is a 404 when the style is gone', () => {
    const error = styleChangeRefusal(style, 'deleted', undefined);
    expectError(error, NotFoundError, {
      reason: 'style_not_found',
      message: "Style 'roads' does not exist.",
    });
  });

  it.each(['deleted', 'renamed', 'changed'] as const)(
    'is a 409 in use, saying what could not be %s',
    (action) => {
      const error = styleChangeRefusal(style, action, { version: 4, layers: 2 });
      expectError(error, DependencyConflictError, {
        reason: 'style_in_use',
        message: `Style 'roads' is used by 2 layer(s); it can't be ${action} while they use it.`,
        extra: { layer_count: 2 },
      });
    },
  );

  it('is a concurrent modification when the version moved on, used or not', () => {
    for (const found of [
      { version: 5, layers: 2 },
      { version: 4, layers: 0 },
    ]) {
      const error = styleChangeRefusal(style, 'deleted', found);
      expectError(error, StateConflictError, {
        reason: 'concurrent_modification',
        message: 'The style was changed by another request; retry.',
      });
    }
  });
});

describe('deleteStyle', () => {
  it('explains a refused delete from the usage read afterwards', async () => {
    const repo = {
      find: async () => style,
      delete: async () => false,
      usage: async () => ({ version: 4, layers: 1 }),
    } as unknown as StyleRepository;
    const error = await deleteStyle(
      { styles: repo },
      { workspaceId: style.workspace_id, style: style.name },
    ).catch((e: unknown) => e);
    expect(shape(error)).toMatchObject({ reason: 'style_in_use' });
  });
});

describe('tileMatrixSetDeleteRefusal', () => {
  const record = { id: 'grid', revision: 2 } as TileMatrixSetRecord;

  it('is a 404 when the set is gone', () => {
    const error = tileMatrixSetDeleteRefusal(record, undefined);
    expectError(error, NotFoundError, {
      reason: 'tile_matrix_set_not_found',
      message: "Tile matrix set 'grid' does not exist.",
    });
  });

  it('is a 409 naming the workspaces whose tiles settings reference it', () => {
    const error = tileMatrixSetDeleteRefusal(record, { count: 2, workspaces: ['a', 'b'] });
    expectError(error, DependencyConflictError, {
      reason: 'tile_matrix_set_referenced',
      message: "Tile matrix set 'grid' is referenced by the tiles settings of workspaces: a, b.",
      extra: { workspaces: ['a', 'b'] },
    });
  });

  it('is a concurrent modification when nothing references it', () => {
    const error = tileMatrixSetDeleteRefusal(record, { count: 0, workspaces: [] });
    expectError(error, StateConflictError, {
      reason: 'concurrent_modification',
      message: 'The tile matrix set was changed by another request; retry.',
    });
  });
});

describe('roleRetireRefusal', () => {
  const role: Role = {
    id: 'auditor',
    name: 'auditor',
    status: 'active',
    ref_count: 0,
    version: 1,
    created_at: at,
    updated_at: at,
  };

  it('is a 404 when the role is gone or already retired', () => {
    for (const current of [undefined, { ...role, status: 'retired' as const }]) {
      const error = roleRetireRefusal(role, current);
      expectError(error, NotFoundError, {
        reason: 'role_not_found',
        message: "Role 'auditor' does not exist.",
      });
    }
  });

  it('is a 409 counting the assignments while it is active', () => {
    const error = roleRetireRefusal(role, { ...role, ref_count: 3 });
    expectError(error, DependencyConflictError, {
      reason: 'role_in_use',
      message:
        "Role 'auditor' is still referenced 3 time(s) by claim mappings and layers' allowed_roles; GET /roles/auditor/deletion-plan lists them. Remove them first.",
      extra: { dependencies: { references: 3, claim_mappings: 3 } },
    });
  });
});

describe('workspaceNotEmpty', () => {
  const workspace = {
    id: 'w1',
    name: 'city',
    status: 'active',
    version: 1,
    created_at: at,
    updated_at: at,
  } as const;

  const section = (count: number) => ({ count, items: [], truncated: false });
  const planOf = (counts: {
    layers?: number;
    groups?: number;
    granules?: number;
    items?: Record<string, number>;
  }) => ({
    target: { scope: 'workspace' as const, id: 'w1', name: 'city' },
    layers: section(counts.layers ?? 0),
    layer_groups: section(counts.groups ?? 0),
    mosaic_granules: counts.granules ?? 0,
    style_references: [],
    role_references: [],
    workspace_items: counts.items ?? {},
    total: 0,
  });

  it('names the catalog items that block the delete, counted from the plan it carries', () => {
    const plan = planOf({
      layers: 3,
      groups: 1,
      items: { services: 2, styles: 1, api_keys: 4, settings: 1 },
    });
    const error = workspaceNotEmpty(workspace, plan);
    expectError(error, DependencyConflictError, {
      reason: 'workspace_not_empty',
      message:
        "Workspace 'city' still holds 7 catalog item(s) (2 service(s), 3 layer(s), 1 layer group(s), 1 style(s)); delete them first, or delete with recurse=true.",
      extra: { recurse_required: true, plan },
    });
  });

  it('says so when only keys and mappings are left, too many for one transaction', () => {
    const plan = planOf({ items: { api_keys: 70, claim_mappings: 50 } });
    const error = workspaceNotEmpty(workspace, plan);
    expect(shape(error)).toMatchObject({
      reason: 'workspace_not_empty',
      message:
        "Workspace 'city' holds too many API keys and claim mappings to delete at once (70 API key(s), 50 claim mapping(s)); remove some first, or delete with recurse=true.",
      extra: { recurse_required: true, plan },
    });
  });
});
