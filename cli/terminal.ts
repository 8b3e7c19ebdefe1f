/**
 * Everything the CLI prints goes through this module (ADR 0109): text that came from a server
 * (names, messages, reasons, warnings, file names, an upload endpoint's error) is untrusted, and a
 * terminal interprets control characters in it — ESC starts ANSI/OSC sequences (colours, cursor
 * moves, window titles, hyperlinks, clipboard writes), CR rewrites a line, C1 CSI/OSC do the same
 * as their ESC forms on some terminals. They are shown as visible escapes instead (`\x1b[31m`).
 */

/**
 * Does a terminal act on this code point? C0 controls and DEL, C1 controls, the line and
 * paragraph separators, and the bidirectional formatting characters that reorder what a line
 * shows ("Trojan Source").
 */
function unsafe(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

const named: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function visible(c: string, code: number): string {
  return (
    named[c] ??
    (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
  );
}

/** The text with every unsafe character (but the newline, when kept) written as a visible escape. */
function escaped(text: string, keepNewline: boolean): string {
  let out = '';
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0;
    out += unsafe(code) && !(keepNewline && c === '\n') ? visible(c, code) : c;
  }
  return out;
}

/** One untrusted value as one line of plain text: every control character shown as an escape. */
export function plain(value: unknown): string {
  if (value === undefined || value === null) return '';
  return escaped(String(value), false);
}

/**
 * A tagged template for a line that quotes untrusted values: the literal parts are the CLI's own,
 * each `${value}` goes through `plain` (so a newline in a name can't forge another line).
 */
export function line(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += plain(value) + (strings[i + 1] ?? '');
  });
  return out;
}

/** Output text with every control character but the newline shown as an escape: the last guard of every write. */
export function screen(text: string): string {
  return escaped(text, true);
}

/**
 * JSON for `--json`: the same value (a JSON parser reads it back unchanged), with the characters a
 * terminal would act on written as `\uXXXX` escapes. JSON.stringify escapes C0 itself; DEL, C1,
 * the separators and the bidi controls it leaves raw.
 */
export function jsonText(value: unknown): string {
  let out = '';
  for (const c of JSON.stringify(value, null, 2) ?? 'null') {
    const code = c.codePointAt(0) ?? 0;
    out += unsafe(code) && c !== '\n' ? `\\u${code.toString(16).padStart(4, '0')}` : c;
  }
  return out;
}

/** Writes to a stream through `screen`. */
export function writeTo(stream: NodeJS.WritableStream, text: string): void {
  stream.write(screen(text));
}

/** A result on stdout. */
export function writeOut(text: string): void {
  writeTo(process.stdout, text);
}

/** A message on stderr. */
export function writeErr(text: string): void {
  writeTo(process.stderr, text);
}
