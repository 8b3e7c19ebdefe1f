import { describe, expect, it } from 'vitest';
import { locationOf } from '#api/operation.ts';
import { listMosaicGranules } from '#api/operations/mosaics.ts';
import { listRoles, removeRolePolicy } from '#api/operations/roles.ts';
import { getStyle } from '#api/operations/styles.ts';
import { listWorkspaces } from '#api/operations/workspaces.ts';

describe('Location from the route table', () => {
  it("fills a route's {parameters}, URI-encoded", () => {
    expect(locationOf(getStyle, { workspace: 'w1', style: 'a b/c' })).toBe(
      '/api/v1/workspaces/w1/styles/a%20b%2Fc',
    );
    expect(locationOf(removeRolePolicy, { roleId: 'editor', policyId: 'p1' })).toBe(
      '/api/v1/roles/editor/policies/p1',
    );
  });
  it('refuses a missing parameter', () => {
    expect(() => locationOf(getStyle, { workspace: 'w1' } as never)).toThrow(
      /getStyle: no value for \{style\}/,
    );
  });
});

describe('default limits from the query schemas', () => {
  it('applies the default of the operation and keeps a given limit', () => {
    expect(listWorkspaces.request.query?.parse({})).toEqual({ limit: 100 });
    expect(listRoles.request.query?.parse({})).toEqual({ limit: 1000 });
    expect(listMosaicGranules.request.query?.parse({ limit: '7' })).toMatchObject({ limit: 7 });
    expect(listWorkspaces.request.query?.safeParse({ limit: '0' }).success).toBe(false);
  });
});
