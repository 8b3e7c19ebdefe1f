/**
 * Labelled fields with their hint and their error in place, the API error where it happened, and
 * the notice when it went well.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { ConsoleApiError } from '#console/api.ts';

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

/** A refusal the API gives without an issue path (one of `reasons`), shown beside the field it is about. */
export function reasonFor(error: unknown, reasons: string[]): string | undefined {
  if (!(error instanceof ConsoleApiError) || !error.reason || !reasons.includes(error.reason))
    return undefined;
  return error.body?.detail || error.message;
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

/** One option of a <SelectInput>: a value shown as itself, or with its own label. */
export type SelectOption<T extends string> = T | { value: T; label: string };

/**
 * A labelled <select> of fixed options with its hint and its error in place (as <Field>);
 * `onChange` gets the chosen value. `empty` labels a first option with the empty value (a filter's
 * "Any", a "(server default)"): T then includes ''.
 */
export function SelectInput<T extends string>({
  label,
  hint,
  error,
  value,
  options,
  onChange,
  empty,
}: {
  label: string;
  hint?: ComponentChildren;
  error?: unknown;
  value: T;
  options: readonly SelectOption<T>[];
  onChange: (value: T) => void;
  empty?: string;
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(props) => (
        <select {...props} value={value} onChange={(e) => onChange(e.currentTarget.value as T)}>
          {empty === undefined ? null : <option value="">{empty}</option>}
          {options.map((option) => {
            const { value: v, label: text } =
              typeof option === 'string' ? { value: option, label: option } : option;
            return (
              <option key={v} value={v}>
                {text}
              </option>
            );
          })}
        </select>
      )}
    </Field>
  );
}

/**
 * A search box with its Search button and, while a search holds, "Clear search": `onSearch` gets
 * the trimmed text ('' when cleared); `search` is the search that holds.
 */
export function SearchForm({
  label,
  hint,
  search,
  onSearch,
}: {
  label: string;
  hint: string;
  search: string;
  onSearch: (text: string) => void;
}) {
  const [text, setText] = useState('');
  return (
    <form
      class="row search"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch(text.trim());
      }}
    >
      <TextInput label={label} hint={hint} type="search" value={text} onInput={setText} />
      <button type="submit">Search</button>
      {search ? (
        <button
          type="button"
          onClick={() => {
            setText('');
            onSearch('');
          }}
        >
          Clear search
        </button>
      ) : null}
    </form>
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

/** A short "saved" or "deleted" note announced to screen readers. */
export function Notice({ children }: { children?: ComponentChildren }) {
  if (!children) return null;
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** The values a text input suggests (its `list`): a <datalist> of `id`. */
export function Suggestions({ id, values }: { id: string; values: readonly string[] }) {
  return (
    <datalist id={id}>
      {values.map((value) => (
        <option key={value} value={value} />
      ))}
    </datalist>
  );
}

/** A form's actions: its submit button (`label`), and its Cancel button when `onCancel` is given. */
export function SubmitActions({
  label,
  busy,
  onCancel,
}: {
  label: ComponentChildren;
  busy: boolean;
  onCancel?: () => void;
}) {
  return (
    <div class="actions">
      <button type="submit" class="primary" disabled={busy}>
        {label}
      </button>
      {onCancel ? (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </div>
  );
}

/** A section holding one form under its heading; submitting the form calls `onSubmit` (an action's run). */
export function FormSection({
  id,
  heading,
  onSubmit,
  children,
}: {
  id: string;
  heading: ComponentChildren;
  onSubmit: (event: Event) => unknown;
  children: ComponentChildren;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{heading}</h2>
      <form onSubmit={(event) => void onSubmit(event)}>{children}</form>
    </section>
  );
}
