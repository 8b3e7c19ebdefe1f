/**
 * The inputs of the settings forms: numbers kept as text, checkboxes, sets of choices, and the
 * limits (a number input each, its server ceiling as the hint and the input's max).
 */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { SETTINGS_CEILINGS } from '#client/settings-limits.ts';
import { ErrorNote, TextInput } from '#console/components/forms.tsx';

const number = new Intl.NumberFormat('en');

/** "1–4,096 pixels (the server ceiling). Empty: the server's default." */
export function limitHint(max: number, unit: string, extra?: string): string {
  return `1–${number.format(max)} ${unit} (the server ceiling). ${extra ? `${extra} ` : ''}Empty: the server's default.`;
}

/** A number input kept as text (empty: unset). */
export function NumberField({
  label,
  hint,
  value,
  onInput,
  min,
  max,
  step,
  error,
}: {
  label: string;
  hint: string;
  value: string;
  onInput: (value: string) => void;
  min: number;
  max?: number;
  step?: string;
  error?: string;
}) {
  return (
    <TextInput
      label={label}
      hint={hint}
      error={error}
      type="number"
      inputMode={step === 'any' ? 'decimal' : 'numeric'}
      min={min}
      max={max}
      step={step ?? '1'}
      value={value}
      onInput={onInput}
    />
  );
}

/** A labelled checkbox with an optional hint and an error in place. */
export function Check({
  label,
  hint,
  checked,
  onChange,
  error,
}: {
  label: string;
  hint?: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  error?: string;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="check">
      <input
        id={id}
        type="checkbox"
        checked={checked}
        aria-describedby={described || undefined}
        aria-invalid={error ? true : undefined}
        onChange={(e) => onChange(e.currentTarget.checked)}
      />
      <label for={id}>{label}</label>
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
      {error ? <ErrorNote error={error} id={`${id}-error`} /> : null}
    </div>
  );
}

/** A set of choices (checkboxes) in a fieldset with its legend; a value shown as itself, or with its label. */
export function Choices<T extends string>({
  legend,
  hint,
  options,
  selected,
  onChange,
  error,
  lead,
  children,
}: {
  legend: string;
  hint?: string;
  options: readonly (T | { value: T; label: string })[];
  selected: readonly T[];
  onChange: (selected: T[]) => void;
  error?: string;
  /** Shown before the choices (a switch they depend on). */
  lead?: ComponentChildren;
  children?: ComponentChildren;
}) {
  const id = useId();
  return (
    <fieldset
      class="choices"
      aria-describedby={hint ? `${id}-hint` : undefined}
      aria-invalid={error ? true : undefined}
    >
      <legend>{legend}</legend>
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
      {lead}
      <div class="choice-list">
        {options
          .map((choice) => (typeof choice === 'string' ? { value: choice, label: choice } : choice))
          .map((option) => (
            <label key={option.value} class="choice">
              <input
                type="checkbox"
                checked={selected.includes(option.value)}
                onChange={(e) =>
                  onChange(
                    e.currentTarget.checked
                      ? [...selected, option.value]
                      : selected.filter((value) => value !== option.value),
                  )
                }
              />{' '}
              {option.label}
            </label>
          ))}
      </div>
      {children}
      {error ? <ErrorNote error={error} /> : null}
    </fieldset>
  );
}

/**
 * The <Choices> props bound to one list field of a settings form: what is selected, the change, and
 * the refusal's message for it (`at`: where the field sits in the document, as a refusal names it).
 */
export function choicesOf<F, K extends keyof F & string>(
  field: K,
  form: F,
  update: (patch: Partial<F>) => void,
  err: (path: string) => string | undefined,
  at = '',
) {
  return {
    selected: form[field],
    onChange: (selected: F[K]) => update({ [field]: selected } as unknown as Partial<F>),
    error: err(`${at}${field}`),
  };
}

/** "" → undefined; otherwise the number typed (NaN stays NaN: the API refuses it in place). */
export const numberOf = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));
export const textOf = (value: number | undefined) => (value === undefined ? '' : String(value));
/** Empty text is left out of the document. */
export const optionalText = (text: string) => (text.trim() === '' ? undefined : text);

/** Drops the keys whose value is undefined (the document is replaced whole). */
export function defined<T extends object>(doc: T): T {
  return Object.fromEntries(Object.entries(doc).filter(([, value]) => value !== undefined)) as T;
}

/** One limit of a settings document: the form's field, its label, its unit and what it bounds. */
export interface Limit<K extends string> {
  field: K;
  label: string;
  unit: string;
  /** A sentence the hint adds after the ceiling. */
  extra?: string;
}

/** The limits' fields of a form as text (empty: unset). */
export function limitTexts<K extends string>(
  doc: { [P in K]?: number },
  limits: readonly Limit<K>[],
): Record<K, string> {
  return Object.fromEntries(limits.map(({ field }) => [field, textOf(doc[field])])) as Record<K, string>;
}

/** The limits' values of a document from the form's text (empty: left out). */
export function limitNumbers<K extends string>(
  form: Record<K, string>,
  limits: readonly Limit<K>[],
): Record<K, number | undefined> {
  return Object.fromEntries(limits.map(({ field }) => [field, numberOf(form[field])])) as Record<
    K,
    number | undefined
  >;
}

/** A settings document with limits, as the client's ceilings name it (`wms`, `tiles`, …). */
type LimitedDocument = keyof typeof SETTINGS_CEILINGS;

/**
 * A form's limits in their grid: one number input each, from 1 to its server ceiling (the
 * ceilings of document `of`). `at` is where the limits sit in the document, as a refusal names them
 * ("settings.").
 */
export function LimitFields<
  D extends LimitedDocument,
  K extends keyof (typeof SETTINGS_CEILINGS)[D] & string,
>({
  of,
  limits,
  values,
  onInput,
  err,
  at = '',
}: {
  of: D;
  limits: readonly Limit<K>[];
  values: Record<K, string>;
  onInput: (patch: Partial<Record<K, string>>) => void;
  err: (path: string) => string | undefined;
  at?: string;
}) {
  const ceilings = SETTINGS_CEILINGS[of] as Record<K, number>;
  return (
    <div class="limits">
      {limits.map(({ field, label, unit, extra }) => (
        <NumberField
          key={field}
          label={label}
          hint={limitHint(ceilings[field], unit, extra)}
          min={1}
          max={ceilings[field]}
          value={values[field]}
          onInput={(value) => onInput({ [field]: value } as Partial<Record<K, string>>)}
          error={err(`${at}${field}`)}
        />
      ))}
    </div>
  );
}
