/**
 * The console's shared parts: loading data, showing an API error where it happened, labelled
 * fields, confirmation dialogs, progress, paging. Every control is a native element (button,
 * input, select, dialog, progress), so keyboard use and screen readers come with them.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ConsoleApiError } from './api.ts';
import { percentText } from './format.ts';

/** Loads data for a page; `reload()` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean; settledFor?: unknown[] }>(
    {
      loading: true,
    },
  );
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, loading: false, settledFor: deps });
    } catch (error) {
      if (mine === generation.current) setState({ error, loading: false, settledFor: deps });
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  // `current`: what is shown was loaded for these very deps and nothing is loading. It is false from
  // the render that changes the deps on (the load itself starts only in the effect after it), so
  // the previous page's data is never taken for the new one's.
  const current =
    !state.loading &&
    state.settledFor !== undefined &&
    state.settledFor.length === deps.length &&
    state.settledFor.every((value, i) => Object.is(value, deps[i]));
  return { data: state.data, error: state.error, loading: state.loading, current, reload };
}

/** Runs an action of a form or button: `busy` while it runs, its error kept for display. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true);
      setError(undefined);
      try {
        return await action(...args);
      } catch (caught) {
        setError(caught);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, setError };
}

/** An error as the API gave it: message, detail, reason and request id; for a 403, the role needed. */
export function ErrorNote({ error, id }: { error: unknown; id?: string }) {
  if (error === undefined || error === null) return null;
  if (error instanceof ConsoleApiError) {
    const body = error.body;
    return (
      <div class="error" role="alert" id={id} data-status={error.status}>
        <p class="error-title">
          <strong>{body?.message ?? `HTTP ${error.status}`}</strong>{' '}
          <span class="status">({error.status})</span>
        </p>
        {body?.detail ? <p class="error-detail">{body.detail}</p> : null}
        {error.body?.issues?.length ? (
          <ul class="error-issues">
            {error.body.issues.map((issue) => (
              <li key={`${issue.path}:${issue.message}`}>
                {issue.path ? <code>{issue.path}</code> : null} {issue.message}
              </li>
            ))}
          </ul>
        ) : null}
        {error.status === 403 && error.roleNeeded ? <p>This needs {error.roleNeeded}.</p> : null}
        {error.status === 429 ? (
          <p>Too many requests: the console waited and retried; try again in {error.retryAfter ?? 1} s.</p>
        ) : null}
        {error.status === 503 ? <p>A service behind the API is unavailable; retry in a moment.</p> : null}
        <p class="error-meta">
          {error.reason ? <code>{error.reason}</code> : null}
          {error.requestId ? <span> · request {error.requestId}</span> : null}
        </p>
      </div>
    );
  }
  return (
    <div class="error" role="alert" id={id}>
      <p class="error-title">
        <strong>{error instanceof Error ? error.message : String(error)}</strong>
      </p>
    </div>
  );
}

/** The issues of a 400 (`issues[]`: path and message), to show each beside its field. */
export function issuesOf(error: unknown): { path: string; message: string }[] {
  if (!(error instanceof ConsoleApiError)) return [];
  return error.body?.issues ?? [];
}

/**
 * The message of the issue a 400 names for one field: its path as the API reports it
 * (`body.name`, `query.limit`) or as a page names it (`name`), or a path under it.
 */
export function issueFor(error: unknown, path: string): string | undefined {
  const names = [path, `body.${path}`, `query.${path}`, `path.${path}`];
  return issuesOf(error).find((issue) =>
    names.some((name) => issue.path === name || issue.path.startsWith(`${name}.`)),
  )?.message;
}

/** A labelled control with an optional hint and an error shown in place. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ComponentChildren;
  error?: unknown;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => JSX.Element;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined })}
      {hint ? (
        <small id={hintId} class="hint">
          {hint}
        </small>
      ) : null}
      {error ? <ErrorNote error={error} id={errorId} /> : null}
    </div>
  );
}

/**
 * A labelled text input with its hint and its error in place (as <Field>); `onInput` gets the text.
 * Any other attribute (required, maxLength, type, autocomplete, …) goes to the <input>.
 */
export function TextInput({
  label,
  hint,
  error,
  value,
  onInput,
  ...attributes
}: {
  label: string;
  hint?: ComponentChildren;
  error?: unknown;
  value: string;
  onInput: (text: string) => void;
} & Omit<JSX.IntrinsicElements['input'], 'label' | 'value' | 'onInput' | 'id'>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(props) => (
        <input {...props} {...attributes} value={value} onInput={(e) => onInput(e.currentTarget.value)} />
      )}
    </Field>
  );
}

/** The page's heading and document title. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  useEffect(() => {
    document.title = `${title} · GeoPlane`;
  }, [title]);
  return <h1>{children}</h1>;
}

/** A modal confirmation (native <dialog>: focus is trapped, Escape cancels). */
export function Confirm({
  open,
  title,
  children,
  confirmLabel,
  danger,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={onCancel} onClose={() => open && onCancel()}>
      <h2 id={titleId}>{title}</h2>
      {children}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A labelled progress bar with its percentage in words. */
export function Progress({
  value,
  max = 100,
  label,
  done = false,
  run,
}: {
  value: number;
  max?: number;
  label: string;
  /** The work is finished: the bar is full, whatever the counter says. */
  done?: boolean;
  /** What the bar follows (an upload, a load): within one run it never goes back. */
  run?: string;
}) {
  const fraction = useMonotone(done ? 1 : max > 0 ? Math.min(Math.max(value, 0), max) / max : 0, run);
  return (
    <div class="progress">
      <progress value={fraction * max} max={max} aria-label={label} />
      <span class="progress-text" aria-hidden="true">
        {percentText(fraction * max, max)}
      </span>
    </div>
  );
}

/**
 * The largest value seen for `run` (the value itself when there is no run): polled counters can
 * step back (a chunk re-run from its checkpoint, a second pass over a file), a bar must not.
 */
export function useMonotone(value: number, run: string | undefined): number {
  const seen = useRef<{ run?: string; value: number }>({ value });
  if (run === undefined) return value;
  if (seen.current.run !== run) seen.current = { run, value };
  else if (value > seen.current.value) seen.current.value = value;
  return seen.current.value;
}

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

/** What a load shows in its place: its error, then its data once there ("Loading…" until then). */
export function Loaded<T>({
  state,
  children,
}: {
  state: { data?: T; error?: unknown; loading: boolean };
  children: (data: T) => ComponentChildren;
}) {
  return (
    <>
      <ErrorNote error={state.error} />
      {state.data ? children(state.data) : state.loading ? <p>Loading…</p> : null}
    </>
  );
}

/**
 * A page of a cursor-paged list as a table, in a load's place (as <Loaded>): the page's rows under
 * their column headings (and the `caption` of the page), `empty` instead of the table when the page has none, `after` below it,
 * then the <Pager> (none when `pager` is null, e.g. for a search that is not paged).
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
}: {
  state: { data?: D; error?: unknown; loading: boolean };
  pager: Parameters<typeof Pager>[0] | null;
  items: (data: D) => readonly T[];
  columns: readonly string[];
  caption?: (data: D) => ComponentChildren;
  empty: ComponentChildren;
  after?: (data: D) => ComponentChildren;
  /** One item's row (or rows), keyed. */
  children: (item: T) => ComponentChildren;
}) {
  return (
    <Loaded state={state}>
      {(data) => {
        const rows = items(data);
        return (
          <>
            {rows.length === 0 ? (
              empty
            ) : (
              <table>
                {caption ? <caption>{caption(data)}</caption> : null}
                <thead>
                  <tr>
                    {columns.map((column) => (
                      <th scope="col" key={column}>
                        {column}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>{rows.map(children)}</tbody>
              </table>
            )}
            {after?.(data)}
            {pager ? <Pager {...pager} /> : null}
          </>
        );
      }}
    </Loaded>
  );
}

/**
 * An action asked for first, on one subject (a row, or the page's own item): `ask(subject)` opens
 * the confirmation, `dialog` is the <Confirm>'s open, confirm and cancel, and confirming runs the
 * action with that subject (as `useAction`: `busy` while it runs, its error kept; `last` is the
 * subject it ran on, to show that error in its row).
 */
export function useConfirmed<T>(action: (subject: T) => Promise<unknown>) {
  const [asking, setAsking] = useState<{ subject: T }>();
  const [last, setLast] = useState<{ subject: T }>();
  const act = useAction(async (subject: T) => {
    setAsking(undefined);
    setLast({ subject });
    await action(subject);
  });
  return {
    busy: act.busy,
    error: act.error,
    last: last?.subject,
    asking: asking?.subject,
    ask: (subject: T) => setAsking({ subject }),
    dialog: {
      open: asking !== undefined,
      onConfirm: () => {
        if (asking) void act.run(asking.subject);
      },
      onCancel: () => setAsking(undefined),
    },
  };
}

/** A row's danger button (Delete, Revoke, Remove) that asks first: it opens `action`'s confirmation. */
export function AskButton<T>({
  action,
  subject,
  label,
  children,
}: {
  action: { busy: boolean; ask: (subject: T) => void };
  subject: T;
  label: string;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class="danger"
      disabled={action.busy}
      aria-label={label}
      onClick={() => action.ask(subject)}
    >
      {children}
    </button>
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

/** The end of an item's edit form: its Save button, the refusal, the "Saved (version N)." notice. */
export function SaveActions({
  action,
  saved,
}: {
  action: { busy: boolean; error: unknown };
  saved?: string;
}) {
  return (
    <>
      <button type="submit" class="primary" disabled={action.busy}>
        Save
      </button>
      <ErrorNote error={action.error} />
      <Notice>{saved}</Notice>
    </>
  );
}

/** One item's "Delete" section: what goes with it, the danger button that asks first, the refusal. */
export function DeleteSection({
  label,
  busy,
  error,
  onDelete,
  children,
}: {
  label: string;
  busy: boolean;
  error: unknown;
  onDelete: () => void;
  children?: ComponentChildren;
}) {
  return (
    <section aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete</h2>
      {children}
      <button type="button" class="danger" disabled={busy} onClick={onDelete}>
        {label}
      </button>
      <ErrorNote error={error} />
    </section>
  );
}

/** A short "saved" or "deleted" note announced to screen readers. */
export function Notice({ children }: { children?: ComponentChildren }) {
  if (!children) return null;
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/**
 * Copies text to the clipboard, saying so; `name` is its accessible name when several sit side by
 * side ("Copy the collection URL"). A browser that refuses the clipboard says so on the button.
 */
export function CopyButton({ text, label = 'Copy', name }: { text: string; label?: string; name?: string }) {
  const [copied, setCopied] = useState<'copied' | 'refused'>();
  return (
    <button
      type="button"
      aria-label={name}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied('copied');
        } catch {
          setCopied('refused');
        }
      }}
    >
      {copied === 'copied' ? 'Copied' : copied === 'refused' ? 'Select and copy' : label}
    </button>
  );
}

/** A read-only text (a URL, a command) with its label and a button that copies it. */
export function CopyField({
  label,
  value,
  hint,
}: {
  label: string;
  value: string;
  hint?: ComponentChildren;
}) {
  return (
    <Field label={label} hint={hint}>
      {(props) => (
        <div class="copy-field">
          <input
            {...props}
            readOnly
            value={value}
            spellcheck={false}
            onFocus={(e) => e.currentTarget.select()}
          />
          <CopyButton text={value} name={`Copy ${label}`} />
        </div>
      )}
    </Field>
  );
}

/** Formats an ISO time for people. */
export function When({ at }: { at?: string | null }) {
  if (!at) return <span>—</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}
