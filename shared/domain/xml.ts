import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { InvalidInputError } from './errors.ts';

/** One element of a parsed document: local and prefixed names kept as written. */
export interface XmlNode {
  name: string;
  attributes: Record<string, string>;
  /** Concatenated direct text content. */
  text: string;
  children: XmlNode[];
}

/** A parsed document: its single root element and the names of its processing instructions. */
export interface XmlDocument {
  root: XmlNode;
  instructions: string[];
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  preserveOrder: true,
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  commentPropName: '#comment',
});

type Ordered = Record<string, unknown> & { ':@'?: Record<string, string> };

function toNode(entry: Ordered): XmlNode | undefined {
  const name = Object.keys(entry).find((k) => k !== ':@');
  if (!name || name === '#text' || name === '#comment' || name.startsWith('?')) return undefined;
  const content = (entry[name] as Ordered[]) ?? [];
  const children: XmlNode[] = [];
  let text = '';
  for (const c of content) {
    if ('#text' in c) text += String(c['#text']);
    else {
      const child = toNode(c);
      if (child) children.push(child);
    }
  }
  return { name, attributes: { ...(entry[':@'] ?? {}) }, text, children };
}

/**
 * Parses a well-formed XML document (fast-xml-parser); a document type declaration is refused
 * (no entity expansion, no external DTD), as is anything but exactly one root element.
 */
export function parseXml(text: string, what: string): XmlDocument {
  // The parser skips DOCTYPE silently; a DTD is never needed by SLD, SE or SVG, so refuse it.
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) {
    throw new InvalidInputError(
      'xml_dtd_refused',
      `The ${what} declares a DTD or entities; they are refused.`,
    );
  }
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) {
    throw new InvalidInputError(
      'malformed_xml',
      `The ${what} is not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col}).`,
    );
  }
  const entries = parser.parse(text) as Ordered[];
  const instructions = entries
    .map((e) => Object.keys(e).find((k) => k !== ':@') ?? '')
    .filter((k) => k.startsWith('?') && k !== '?xml')
    .map((k) => k.slice(1));
  const roots = entries.map(toNode).filter((n): n is XmlNode => n !== undefined);
  const root = roots[0];
  if (!root || roots.length !== 1) {
    throw new InvalidInputError('malformed_xml', `The ${what} must have exactly one root element.`);
  }
  return { root, instructions };
}
