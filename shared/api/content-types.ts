import type { Operation } from './operation.ts';

/**
 * How a route takes its request body, read from its route table entry (the one source of truth
 * for makeHandler's 415 check and the OpenAPI document): `json` when it declares a body schema,
 * `raw` when it takes bytes (`rawBody`, any Content-Type), `none` when it takes no body.
 */
export function bodyKind(op: Pick<Operation, 'rawBody' | 'request'>): 'json' | 'raw' | 'none' {
  if (op.rawBody) return 'raw';
  return op.request.body ? 'json' : 'none';
}

/** The media types a JSON body may be declared as (the `Accept` of a 415 answer). */
export const JSON_MEDIA_TYPES = 'application/json, application/*+json';

const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const quoted = /^"((?:[^"\\]|\\.)*)"$/;

/** A parsed Content-Type: type and subtype in lower case, parameters as [name, value] pairs. */
export interface MediaType {
  type: string;
  subtype: string;
  parameters: [string, string][];
}

/** Parses a Content-Type header value (RFC 9110 §8.3.1); undefined when it is not one media type. */
export function parseMediaType(header: string): MediaType | undefined {
  const [head = '', ...rest] = header.split(';');
  const slash = head.indexOf('/');
  const type = head.slice(0, slash).trim();
  const subtype = head.slice(slash + 1).trim();
  if (slash < 0 || !token.test(type) || !token.test(subtype)) return undefined;
  const parameters: [string, string][] = [];
  for (const part of rest) {
    const p = part.trim();
    if (p === '') continue;
    const eq = p.indexOf('=');
    const name = p.slice(0, eq).trim();
    let value = p.slice(eq + 1).trim();
    if (eq <= 0 || !token.test(name)) return undefined;
    const q = quoted.exec(value);
    if (q) value = (q[1] ?? '').replace(/\\(.)/g, '$1');
    else if (!token.test(value)) return undefined;
    parameters.push([name.toLowerCase(), value]);
  }
  return { type: type.toLowerCase(), subtype: subtype.toLowerCase(), parameters };
}

/**
 * True for `application/json` and `application/<x>+json`, case-insensitive, whose only parameter
 * is an optional `charset=utf-8`: JSON is UTF-8 (RFC 8259 §8.1), and a body we would decode
 * otherwise than its sender meant is refused rather than misread (ADR 0075).
 */
export function isJsonMediaType(header: string): boolean {
  const media = parseMediaType(header);
  if (media?.type !== 'application') return false;
  const json = media.subtype === 'json' || (media.subtype.endsWith('+json') && media.subtype.length > 5);
  return (
    json && media.parameters.every(([name, value]) => name === 'charset' && value.toLowerCase() === 'utf-8')
  );
}

/**
 * Does the route take a body declared with this Content-Type (undefined when none was sent)?
 * JSON routes need a JSON media type; raw routes take any; routes without a body ignore it.
 */
export function acceptsContentType(
  op: Pick<Operation, 'rawBody' | 'request'>,
  contentType: string | undefined,
): boolean {
  if (bodyKind(op) !== 'json') return true;
  return contentType !== undefined && isJsonMediaType(contentType);
}
