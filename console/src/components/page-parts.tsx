/** The parts of a page: its title, progress bars, status badges, notices, copy buttons, times. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { percentText, statusText } from '#console/format.ts';
import { Field } from './forms.tsx';

/** The page's heading and document title. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  useEffect(() => {
    document.title = `${title} · GeoPlane`;
  }, [title]);
  return <h1>{children}</h1>;
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

/** A workflow's status (an import's, a deletion's) as a badge, in words. */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{statusText(status)}</span>;
}

/** A workflow that failed (an import, a deletion): in which phase, its error, what else to say. */
export function FailureAlert({
  title,
  phase,
  after = '',
  detail,
  children,
}: {
  title: string;
  phase: string;
  /** Said after the phase (" after 3 attempts"). */
  after?: string;
  detail?: string | null;
  children?: ComponentChildren;
}) {
  return (
    <div class="error" role="alert">
      <p class="error-title">
        <strong>{title}</strong> in phase {phase}
        {after}.
      </p>
      {detail ? <p class="error-detail">{detail}</p> : null}
      {children}
    </div>
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

/** An item's record in its facts (inside a <dl class="facts">): its id, version, creation and update, those given. */
export function RecordFacts({
  id,
  version,
  created,
  updated,
}: {
  id?: string;
  version: number;
  created?: string;
  updated: string;
}) {
  return (
    <>
      {id === undefined ? null : (
        <>
          <dt>Id</dt>
          <dd>
            <code>{id}</code>
          </dd>
        </>
      )}
      <dt>Version</dt>
      <dd>{version}</dd>
      {created === undefined ? null : <TimeFact label="Created" at={created} />}
      <TimeFact label="Updated" at={updated} />
    </>
  );
}

/** A time among an item's facts (inside a <dl class="facts">): its label, then the time for people. */
export function TimeFact({ label, at }: { label: string; at?: string | null }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>
        <When at={at} />
      </dd>
    </>
  );
}

/** A workflow's status (as a badge) and phase among its facts (an import's, a deletion's). */
export function StatusFacts({ status, phase }: { status: string; phase: string }) {
  return (
    <>
      <dt>Status</dt>
      <dd>
        <StatusBadge status={status} />
      </dd>
      <dt>Phase</dt>
      <dd>{phase}</dd>
    </>
  );
}
