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

/** Deepest element nesting accepted in client XML (SLD/SE styles, SVG assets); deeper is a 400 (ADR 0073). */
export const MAX_XML_DEPTH = 100;

/**
 * The parser, built on first use: a module-level instance would keep fast-xml-parser (~45 KB) in
 * every bundle that imports the styles module, reads included (ADR 0100).
 */
let xmlParser: XMLParser | undefined;
const parser = (): XMLParser =>
  (xmlParser ??= new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    preserveOrder: true,
    processEntities: false,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    commentPropName: '#comment',
    // The parser's own nesting guard; ours (in toTree) refuses first, this one is the backstop.
    maxNestedTags: MAX_XML_DEPTH + 1,
  }));

type Ordered = Record<string, unknown> & { ':@'?: Record<string, string> };

function tooDeep(what: string): InvalidInputError {
  return new InvalidInputError(
    'xml_too_deep',
    `The ${what} nests elements deeper than ${MAX_XML_DEPTH} levels; flatten it.`,
  );
}

function elementName(entry: Ordered): string | undefined {
  const name = Object.keys(entry).find((k) => k !== ':@');
  if (!name || name === '#text' || name === '#comment' || name.startsWith('?')) return undefined;
  return name;
}

/** Builds the element tree iteratively (no recursion over client input), refusing excess depth. */
function toTree(entry: Ordered, name: string, what: string): XmlNode {
  const root: XmlNode = { name, attributes: { ...(entry[':@'] ?? {}) }, text: '', children: [] };
  const pending: { node: XmlNode; content: Ordered[]; depth: number }[] = [
    { node: root, content: (entry[name] as Ordered[]) ?? [], depth: 1 },
  ];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { node, content, depth } = next;
    for (const c of content) {
      if ('#text' in c) {
        node.text += String(c['#text']);
        continue;
      }
      const childName = elementName(c);
      if (!childName) continue;
      if (depth >= MAX_XML_DEPTH) throw tooDeep(what);
      const child: XmlNode = { name: childName, attributes: { ...(c[':@'] ?? {}) }, text: '', children: [] };
      node.children.push(child);
      pending.push({ node: child, content: (c[childName] as Ordered[]) ?? [], depth: depth + 1 });
    }
  }
  return root;
}

/**
 * Parses a well-formed XML document (fast-xml-parser); a document type declaration is refused
 * (no entity expansion, no external DTD), as is anything but exactly one root element or nesting
 * deeper than MAX_XML_DEPTH. Every refusal, including one from the parser itself, is a 400.
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
  let entries: Ordered[];
  try {
    entries = parser().parse(text) as Ordered[];
  } catch (error) {
    if (/nested/i.test(String((error as Error)?.message))) throw tooDeep(what);
    throw new InvalidInputError(
      'malformed_xml',
      `The ${what} could not be parsed: ${String((error as Error)?.message ?? error).slice(0, 200)}.`,
    );
  }
  const instructions = entries
    .map((e) => Object.keys(e).find((k) => k !== ':@') ?? '')
    .filter((k) => k.startsWith('?') && k !== '?xml')
    .map((k) => k.slice(1));
  const roots = entries.flatMap((e) => {
    const name = elementName(e);
    return name ? [toTree(e, name, what)] : [];
  });
  const root = roots[0];
  if (!root || roots.length !== 1) {
    throw new InvalidInputError('malformed_xml', `The ${what} must have exactly one root element.`);
  }
  return { root, instructions };
}
