/** Cursor-paged lists and their tables. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Loaded, useLoad } from './data.tsx';
import { ErrorNote, SearchForm } from './forms.tsx';

/**
 * "Next page" for a cursor-paged list. While a page loads (`busy`) both buttons wait: the shown
 * page's cursor would otherwise be followed twice, or a click meant for it land on the next one.
 */
export function Pager({
  next,
  busy = false,
  onNext,
  onFirst,
}: {
  next?: string | null;
  busy?: boolean;
  onNext: () => void;
  onFirst?: () => void;
}) {
  return (
    <nav class="pager" aria-label="Pages" aria-busy={busy}>
      {onFirst ? (
        <button type="button" disabled={busy} onClick={onFirst}>
          First page
        </button>
      ) : null}
      <button type="button" disabled={!next || busy} onClick={onNext}>
        Next page
      </button>
    </nav>
  );
}

/**
 * A cursor-paged list: the current page's cursor, what to spread into the list's query for it, the
 * way back to the start, and the <Pager>'s props under a page.
 */
export function useCursor() {
  const [cursor, setCursor] = useState<string | undefined>();
  const first = () => setCursor(undefined);
  const query: { cursor?: string } = cursor ? { cursor } : {};
  return {
    cursor,
    query,
    first,
    pager: (next?: string | null, busy = false) => ({
      next,
      busy,
      onNext: () => setCursor(next ?? undefined),
      onFirst: cursor ? first : undefined,
    }),
  };
}

/**
 * A cursor-paged list loaded with `useLoad`: `load` gets the page's query part (`{ cursor }` past the
 * first page); `pager` is the <Pager>'s props, `firstPage()` starts again (e.g. for a new filter).
 */
export function usePagedList<T extends { next_cursor?: string | null }>(
  load: (page: { cursor?: string }) => Promise<T>,
  deps: unknown[],
) {
  const page = useCursor();
  const list = useLoad(() => load(page.query), [...deps, page.cursor]);
  return { ...list, pager: page.pager(list.data?.next_cursor, !list.current), firstPage: page.first };
}

/** A table under its column headings (and its caption); `children` are the rows of its body. */
export function Table({
  columns,
  caption,
  children,
}: {
  columns: readonly string[];
  caption?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <table>
      {caption ? <caption>{caption}</caption> : null}
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** What <PagedTable> shows: a load's state, its pager, and how its data becomes rows. */
interface PagedTableProps<D, T> {
  state: { data?: D; error?: unknown; loading: boolean };
  pager: Parameters<typeof Pager>[0] | null;
  items: (data: D) => readonly T[];
  columns: readonly string[];
  caption?: (data: D) => ComponentChildren;
  empty: ComponentChildren;
  after?: (data: D) => ComponentChildren;
  /** One item's row (or rows), keyed. */
  children: (item: T) => ComponentChildren;
}

/**
 * A page of a cursor-paged list as a table, in a load's place (as <Loaded>): the page's rows under
 * their column headings (and the `caption` of the page), `empty` instead of the table when the page
 * has none, `after` below it, then the <Pager> (none when `pager` is null, e.g. for a search that is
 * not paged).
 */
export function PagedTable<D, T>({
  state,
  pager,
  items,
  columns,
  caption,
  empty,
  after,
  children,
}: PagedTableProps<D, T>) {
  return (
    <Loaded state={state}>
      {(data) => {
        const rows = items(data);
        return (
          <>
            {rows.length === 0 ? (
              empty
            ) : (
              <Table columns={columns} caption={caption?.(data)}>
                {rows.map(children)}
              </Table>
            )}
            {after?.(data)}
            {pager ? <Pager {...pager} /> : null}
          </>
        );
      }}
    </Loaded>
  );
}

/** A section headed `heading` holding a `usePagedList` list as a <PagedTable> with its pager. */
export function PagedSection<D, T>({
  id,
  heading,
  list,
  ...table
}: {
  id: string;
  heading: ComponentChildren;
  list: PagedTableProps<D, T>['state'] & { pager: Parameters<typeof Pager>[0] };
} & Omit<PagedTableProps<D, T>, 'state' | 'pager'>) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{heading}</h2>
      <PagedTable state={list} pager={list.pager} {...table} />
    </section>
  );
}

/** A table row's error, shown in a row of its own below it. */
export function RowError({ error, colSpan }: { error: unknown; colSpan: number }) {
  if (!error) return null;
  return (
    <tr>
      <td colSpan={colSpan}>
        <ErrorNote error={error} />
      </td>
    </tr>
  );
}

/**
 * A searchable list: its <SearchForm> (a new search starts again at the list's first page) and the
 * section below it, headed `noun`, or "`noun` matching “…”" while a search holds.
 */
export function SearchedSection({
  id,
  noun,
  label,
  hint,
  search,
  setSearch,
  list,
  children,
}: {
  id: string;
  noun: string;
  label: string;
  hint: string;
  search: string;
  setSearch: (text: string) => void;
  list: { firstPage: () => void };
  children: ComponentChildren;
}) {
  return (
    <>
      <SearchForm
        label={label}
        hint={hint}
        search={search}
        onSearch={(text) => {
          list.firstPage();
          setSearch(text);
        }}
      />
      <section aria-labelledby={id}>
        <h2 id={id}>{search ? `${noun} matching “${search}”` : noun}</h2>
        {children}
      </section>
    </>
  );
}
