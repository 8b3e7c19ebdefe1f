/** A page of results with an opaque cursor for the next one. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}
