/**
 * A style's fields, shared by the create and edit forms: name, format, title, description and the
 * document (typed, or loaded from a file whose format is guessed), and the request body they make.
 */
import { useState } from 'preact/hooks';
import { ConsoleApiError, type Schemas } from '#console/api.ts';
import { Field, issueFor, SelectInput, TextInput } from '#console/components/forms.tsx';
import { formatBytes, nameFromFile } from '#console/format.ts';

export type Style = Schemas['Style'];
type StyleFormat = Style['format'];

/** Every style format, in the order of the form's choices, with its label. */
const FORMAT_LABELS: Record<StyleFormat, string> = {
  mapbox: 'MapLibre / Mapbox style (JSON)',
  'sld_1.0.0': 'SLD 1.0.0 (XML)',
  'sld_1.1.0': 'SLD 1.1.0 (XML)',
  'se_1.1.0': 'Symbology Encoding 1.1.0 (XML)',
};

const FORMATS = (Object.keys(FORMAT_LABELS) as StyleFormat[]).map((value) => ({
  value,
  label: FORMAT_LABELS[value],
}));

export const formatLabel = (format: StyleFormat) => FORMATS.find((f) => f.value === format)?.label ?? format;

/** Largest style body the API takes (MAX_STYLE_BODY_BYTES): 256 KiB. */
const MAX_BODY_BYTES = 256 * 1024;

/** What the style document's text most likely is. */
function guessFormat(text: string): StyleFormat | undefined {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) return 'mapbox';
  if (!trimmed.startsWith('<')) return undefined;
  const root = /<(?:[A-Za-z_][\w.-]*:)?(StyledLayerDescriptor|FeatureTypeStyle|CoverageStyle)\b([^>]*)>/.exec(
    trimmed,
  );
  if (!root) return undefined;
  if (root[1] !== 'StyledLayerDescriptor') return 'se_1.1.0';
  return /\bversion\s*=\s*["']1\.1\.0["']/.test(root[2] ?? '') ? 'sld_1.1.0' : 'sld_1.0.0';
}

/** The body as the editor shows it: XML as is, a MapLibre style as indented JSON. */
function bodyText(body: Style['body']): string {
  return typeof body === 'string' ? body : JSON.stringify(body, null, 2);
}

/** Errors that concern the style document itself, shown beside the editor. */
export function isBodyError(error: unknown): boolean {
  if (!(error instanceof ConsoleApiError)) return false;
  if (error.status === 413) return true;
  if (error.status !== 400) return false;
  if (error.body?.issues?.some((issue) => issue.path === 'body' || issue.path.startsWith('body.body')))
    return true;
  return /^(invalid_style|invalid_asset_reference|json_too_deep|style_too_large|malformed_xml|xml_|asset_)/.test(
    error.reason ?? '',
  );
}

export interface Draft {
  name: string;
  format: StyleFormat;
  title: string;
  description: string;
  body: string;
}

/** The fields of a style (create and edit share them). */
export function StyleFields({
  draft,
  setDraft,
  error,
}: {
  draft: Draft;
  setDraft: (update: Partial<Draft>) => void;
  error: unknown;
}) {
  const [fileError, setFileError] = useState<unknown>();
  const loadFile = async (input: HTMLInputElement) => {
    setFileError(undefined);
    const file = input.files?.[0];
    if (!file) return;
    if (file.size > MAX_BODY_BYTES) {
      setFileError(
        new Error(
          `${file.name} is ${formatBytes(file.size)}; a style body may have at most ${formatBytes(MAX_BODY_BYTES)}.`,
        ),
      );
      return;
    }
    const text = await file.text();
    const format = guessFormat(text);
    setDraft({
      body: text,
      ...(format ? { format } : {}),
      ...(draft.name === '' ? { name: nameFromFile(file.name) } : {}),
    });
  };
  return (
    <>
      <TextInput
        label="Name"
        hint="1–64 letters, digits, '.', '_' and '-'; a different name renames the style."
        error={issueFor(error, 'body.name')}
        required
        maxLength={64}
        value={draft.name}
        onInput={(text) => setDraft({ name: text })}
      />
      <SelectInput
        label="Format"
        error={issueFor(error, 'body.format')}
        value={draft.format}
        options={FORMATS}
        onChange={(format) => setDraft({ format })}
      />
      <TextInput
        label="Title"
        hint="At most 256 characters."
        error={issueFor(error, 'body.title')}
        maxLength={256}
        value={draft.title}
        onInput={(text) => setDraft({ title: text })}
      />
      <TextInput
        label="Description"
        hint="At most 4096 characters."
        error={issueFor(error, 'body.description')}
        maxLength={4096}
        value={draft.description}
        onInput={(text) => setDraft({ description: text })}
      />
      <Field
        label="Style file"
        hint="A .json MapLibre style or an .sld/.xml document; it fills the editor below (and the format, when it can tell)."
        error={fileError}
      >
        {(props) => (
          <input
            {...props}
            type="file"
            accept=".json,.sld,.se,.xml,application/json,application/xml,text/xml"
            onChange={(e) => void loadFile(e.currentTarget)}
          />
        )}
      </Field>
      <Field
        label="Style document"
        hint="MapLibre JSON or SLD/SE XML, at most 256 KiB. Images are referenced as asset:<name> (a style asset of this workspace)."
        error={isBodyError(error) ? error : issueFor(error, 'body.body')}
      >
        {(props) => (
          <textarea
            {...props}
            class="style-editor"
            required
            spellcheck={false}
            rows={18}
            value={draft.body}
            onInput={(e) => setDraft({ body: e.currentTarget.value })}
          />
        )}
      </Field>
    </>
  );
}

/** The request body of a draft: JSON text goes as text; the API parses and validates it. */
export function inputOf(draft: Draft) {
  return {
    name: draft.name.trim(),
    format: draft.format,
    body: draft.body,
    ...(draft.title.trim() ? { title: draft.title.trim() } : {}),
    ...(draft.description.trim() ? { description: draft.description.trim() } : {}),
  };
}

export const emptyDraft: Draft = { name: '', format: 'mapbox', title: '', description: '', body: '' };

/** A stored style as the form shows it. */
export function draftOf(style: Style): Draft {
  return {
    name: style.name,
    format: style.format,
    title: style.title ?? '',
    description: style.description ?? '',
    body: bodyText(style.body),
  };
}
