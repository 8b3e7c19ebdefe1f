/** Actions asked for first: the confirmation dialog, the danger buttons that open it. */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useAction } from './data.tsx';
import { ErrorNote } from './forms.tsx';

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
