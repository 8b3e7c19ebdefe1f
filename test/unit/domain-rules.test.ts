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
} from '../../shared/domain/errors.ts';
import {
  assetDeleteRefusal,
  deleteStyleAsset,
  type StyleAsset,
  type StyleAssetRepository,
} from '../../shared/domain/style-assets.ts';

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

describe('assetDeleteRefusal', () => {
  it('is a 404 when the asset is gone', () => {
    // Act
    const error = assetDeleteRefusal(asset, undefined);
    // Assess
    expect(error).toBeInstanceOf(NotFoundError);
    expect(shape(error)).toMatchObject({
      reason: 'style_asset_not_found',
      message: "Style asset 'pin' does not exist.",
    });
  });

  it('is a 409 naming the referencing style the store read', () => {
    const error = assetDeleteRefusal(asset, { count: 2, styles: ['roads'] });
    expect(error).toBeInstanceOf(DependencyConflictError);
    expect(shape(error)).toMatchObject({
      reason: 'asset_referenced',
      message: "Style asset 'pin' is referenced by style roads.",
    });
  });

  it("says 'another style' when the count is up but no reference was read", () => {
    const error = assetDeleteRefusal(asset, { count: 1, styles: [] });
    expect(shape(error).message).toBe("Style asset 'pin' is referenced by style another style.");
  });

  it('is a concurrent modification when nothing references it any more', () => {
    const error = assetDeleteRefusal(asset, { count: 0, styles: [] });
    expect(error).toBeInstanceOf(StateConflictError);
    expect(shape(error)).toMatchObject({
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
    } as unknown as StyleAssetRepository;
    return { repo, calls };
  }

  it('reads nothing more when the delete went through', async () => {
    const { repo, calls } = assets(true);
    await deleteStyleAsset(repo, asset);
    expect(calls).toEqual(['remove']);
  });

  it('explains a refused delete from the references read afterwards', async () => {
    const { repo, calls } = assets(false);
    await expect(deleteStyleAsset(repo, asset)).rejects.toBeInstanceOf(DependencyConflictError);
    expect(calls).toEqual(['remove', 'referencesOf']);
  });
});
