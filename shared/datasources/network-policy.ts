/**
 * Which database hosts GeoPlane may open connections to (ADR 0074). A workspace admin types the
 * host and port of a PostGIS service; without this check the server would connect anywhere it
 * can reach — its own loopback, the VPC, the instance metadata address — and become a probe.
 *
 * Only public unicast addresses pass by default. Loopback, link-local (169.254.169.254 among
 * them), private, shared (CGNAT), unique-local, multicast, unspecified and reserved addresses are
 * refused unless the operator's allowlist names them (`allowedDatabaseHosts` in cdk.json,
 * `GEOPLANE_ALLOWED_DATABASE_HOSTS` locally). IP literals are parsed in every spelling
 * (`2130706433`, `0x7f.1`, `::ffff:127.0.0.1`, `[::1]`) by ipaddr.js; names are resolved first and
 * EVERY address must pass, and the caller then connects to the checked address (no DNS rebinding).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { config } from '#config/env.ts';
import { RuleViolationError } from '#domain/errors.ts';
import { CONNECTION_TARGET_NOT_ALLOWED } from '#domain/services.ts';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Ports = { from: number; to: number };

/** One entry of the operator's allowlist. */
export type AllowEntry =
  | { kind: 'any'; ports?: Ports }
  | { kind: 'range'; range: [Address, number]; ports?: Ports }
  | { kind: 'name'; name: string; ports?: Ports };

/** Resolves a host name to its addresses (all of them). */
export type Lookup = (name: string) => Promise<string[]>;

/** Where a checked connection goes: the address to dial, and the name for TLS (SNI, verify-full). */
export interface CheckedTarget {
  address: string;
  family: 4 | 6;
  /** The host name as given (absent for an IP literal). */
  servername?: string;
}

/** Resolving a name takes at most this long (it is an outage beyond, like a connect timeout). */
export const LOOKUP_TIMEOUT_MS = 2_000;

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
/** RFC 1123 host names (underscores tolerated, as resolvers do); no ports, paths or sockets. */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is the IPv4 address it carries. */
function canonical(a: Address): Address {
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()
    ? (a as ipaddr.IPv6).toIPv4Address()
    : a;
}

/** An IP literal in any spelling (decimal, octal, hex, short IPv4; IPv6 with or without brackets), else undefined. */
export function parseIpLiteral(host: string): Address | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!ipaddr.isValid(bare)) return undefined;
  return canonical(ipaddr.parse(bare));
}

/** True for a public unicast address: IPv4 outside every special range, IPv6 in 2000::/3 and not special. */
export function isPublicAddress(address: Address): boolean {
  const a = canonical(address);
  if (a.kind() === 'ipv4') return a.range() === 'unicast';
  return a.range() === 'unicast' && a.match(GLOBAL_UNICAST_V6);
}

function parsePorts(text: string, entry: string, label: string): Ports {
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  const from = Number(m?.[1]);
  const to = Number(m?.[2] ?? m?.[1]);
  if (!m || from < 1 || to > 65535 || from > to) {
    throw new Error(`${label}: bad port or port range in '${entry}'`);
  }
  return { from, to };
}

/** Splits `host`, `host:port`, `[v6]:port`, `cidr:lo-hi`, `v6` (no port without brackets). */
function splitPort(entry: string, label: string): { host: string; ports?: Ports } {
  if (entry.startsWith('[')) {
    const end = entry.indexOf(']');
    if (end < 0) throw new Error(`${label}: unclosed '[' in '${entry}'`);
    const rest = entry.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) throw new Error(`${label}: bad entry '${entry}'`);
    return { host: entry.slice(1, end), ...(rest ? { ports: parsePorts(rest.slice(1), entry, label) } : {}) };
  }
  const colons = entry.split(':').length - 1;
  if (colons !== 1) return { host: entry };
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at), ports: parsePorts(entry.slice(at + 1), entry, label) };
}

/**
 * Parses the operator's allowlist: comma- or space-separated entries, each an IP (any spelling),
 * a CIDR (`10.0.0.0/16`, `[fd00::/8]`), a host name, or `*` (anything), optionally with `:port`
 * or `:from-to` (IPv6 in brackets then). Throws on an entry it can't read: a typo must not
 * silently allow or refuse. `label` names the list in those errors (the import URL list, ADR 0129,
 * shares the syntax).
 */
export function parseAllowList(spec: string | undefined, label = 'allowed database hosts'): AllowEntry[] {
  const entries: AllowEntry[] = [];
  for (const raw of (spec ?? '').split(/[\s,]+/)) {
    if (raw === '') continue;
    const { host, ports } = splitPort(raw, label);
    const withPorts = ports ? { ports } : {};
    if (host === '*') {
      entries.push({ kind: 'any', ...withPorts });
    } else if (host.includes('/')) {
      if (!ipaddr.isValidCIDR(host)) throw new Error(`${label}: bad CIDR '${raw}'`);
      const [base, bits] = ipaddr.parseCIDR(host);
      const mapped = base.kind() === 'ipv6' && (base as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96;
      const range: [Address, number] = mapped ? [canonical(base), bits - 96] : [base, bits];
      entries.push({ kind: 'range', range, ...withPorts });
    } else if (parseIpLiteral(host)) {
      const a = parseIpLiteral(host) as Address;
      entries.push({ kind: 'range', range: [a, a.kind() === 'ipv4' ? 32 : 128], ...withPorts });
    } else if (HOST_NAME.test(host)) {
      entries.push({ kind: 'name', name: host.toLowerCase().replace(/\.$/, ''), ...withPorts });
    } else {
      throw new Error(`${label}: '${raw}' is not an IP, CIDR, host name or *`);
    }
  }
  return entries;
}

const portMatches = (ports: Ports | undefined, port: number) =>
  !ports || (port >= ports.from && port <= ports.to);

function notAllowed(host: string, port: number): RuleViolationError {
  return new RuleViolationError(
    CONNECTION_TARGET_NOT_ALLOWED,
    `Connections to ${host}:${port} are not allowed: the host is not a public address (loopback, link-local, private, shared and reserved ranges, and names that resolve to them, are refused) or not a host name at all. An operator can allow it (allowedDatabaseHosts in cdk.json, GEOPLANE_ALLOWED_DATABASE_HOSTS locally).`,
  );
}

async function systemLookup(name: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`lookup of ${name} timed out`), { code: 'EAI_AGAIN' })),
      LOOKUP_TIMEOUT_MS,
    );
  });
  try {
    const found = await Promise.race([dnsLookup(name, { all: true, verbatim: true }), timeout]);
    return found.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
}

/** The connection-target check: an allowlist and a resolver. */
export class TargetPolicy {
  constructor(
    private readonly allow: AllowEntry[],
    private readonly lookup: Lookup = systemLookup,
  ) {}

  /** True when the operator's list admits this address (reached through `name`, if any) and port. */
  private allowed(address: Address, name: string | undefined, port: number): boolean {
    return this.allow.some((entry) => {
      if (!portMatches(entry.ports, port)) return false;
      if (entry.kind === 'any') return true;
      if (entry.kind === 'name') return name === entry.name;
      const [base] = entry.range;
      return base.kind() === address.kind() && address.match(entry.range);
    });
  }

  /**
   * Checks `host:port` and returns the address to connect to. Refusals are RuleViolationError
   * `connection_target_not_allowed`; a name that does not resolve throws the resolver's error
   * (ENOTFOUND, EAI_AGAIN: an outage to the caller, told apart from nothing else).
   */
  async check(host: string, port: number): Promise<CheckedTarget> {
    const literal = parseIpLiteral(host);
    let addresses: Address[];
    let name: string | undefined;
    if (literal) {
      addresses = [literal];
    } else {
      if (!HOST_NAME.test(host)) throw notAllowed(host, port);
      name = host.toLowerCase().replace(/\.$/, '');
      const resolved = await this.lookup(name);
      addresses = resolved.map((a) => parseIpLiteral(a)).filter((a): a is Address => a !== undefined);
      if (addresses.length === 0 || addresses.length !== resolved.length) {
        throw Object.assign(new Error(`${name} did not resolve`), { code: 'ENOTFOUND' });
      }
    }
    for (const a of addresses) {
      if (!isPublicAddress(a) && !this.allowed(a, name, port)) throw notAllowed(host, port);
    }
    const first = addresses[0] as Address;
    return {
      address: first.toString(),
      family: first.kind() === 'ipv4' ? 4 : 6,
      ...(name ? { servername: name } : {}),
    };
  }
}

let shared: TargetPolicy | undefined;

/** The policy of this process, from `GEOPLANE_ALLOWED_DATABASE_HOSTS` (read once). */
export function connectionTargets(): TargetPolicy {
  shared ??= new TargetPolicy(parseAllowList(config().GEOPLANE_ALLOWED_DATABASE_HOSTS));
  return shared;
}
