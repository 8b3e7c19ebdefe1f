/** What a listing is asked: how many items at most, and the cursor the page before ended with. */
export interface PageQuery {
  limit: number;
  cursor?: string;
}

/** A listing of one workspace's items. */
export type WorkspacePageQuery = PageQuery & { workspaceId: string };

/** A page of results with an opaque cursor for the next one. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
