import { describe, expect, it } from 'vitest';
import {
  isPublicAddress,
  parseAllowList,
  parseIpLiteral,
  TargetPolicy,
} from '#datasources/network-policy.ts';
import { RuleViolationError } from '#domain/errors.ts';

// ADR 0074: connection targets are public unicast addresses unless the operator allows more;
// names are resolved first and every address must pass. No test here opens a socket.

/** A resolver that answers from a table (and counts its calls). */
function fakeDns(table: Record<string, string[]>) {
  const calls: string[] = [];
  const lookup = async (name: string) => {
    calls.push(name);
    const found = table[name];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { lookup, calls };
}

const refusal = (e: unknown) =>
  e instanceof RuleViolationError && e.reason === 'connection_target_not_allowed';

describe('parseIpLiteral', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', '169.254.169.254'],
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[fe80::1]', 'fe80::1'],
  ])('reads %s as %s', (host, address) => {
    expect(parseIpLiteral(host)?.toString()).toBe(address);
  });

  it.each(['db.example.com', 'localhost', '127.0.0.1.', '1.2.3.4.5', '/var/run/postgresql', ''])(
    'leaves %j to the resolver (not an IP literal)',
    (host) => {
      expect(parseIpLiteral(host)).toBeUndefined();
    },
  );
});

describe('isPublicAddress', () => {
  it.each([
    '0.0.0.0',
    '0.1.2.3',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '169.254.0.1',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '100.127.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '::',
    '::1',
    'fe80::1',
    'febf::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::7f00:1',
    '2002:7f00:1::1',
    '2001::1',
    '2001:db8::1',
    '::7f00:1',
    '100::1',
    'fec0::1',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(parseIpLiteral(address) as never)).toBe(false);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '52.95.110.1', '2600:1f18::1', '2a00:1450:4001::1'])(
    'accepts %s',
    (address) => {
      expect(isPublicAddress(parseIpLiteral(address) as never)).toBe(true);
    },
  );
});

describe('TargetPolicy.check', () => {
  const dns = fakeDns({
    'db.example.com': ['52.95.110.1'],
    'dual.example.com': ['52.95.110.1', '2600:1f18::1'],
    'rebind.example.com': ['52.95.110.1', '127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
    'inside.corp': ['10.1.2.3'],
    'v6.example.com': ['::1'],
    localhost: ['127.0.0.1', '::1'],
  });
  const policy = new TargetPolicy([], dns.lookup);

  it.each([
    ['127.0.0.1', 5432],
    ['127.0.0.1', 1],
    ['2130706433', 5432],
    ['0x7f.1', 5432],
    ['0177.0.0.1', 5432],
    ['127.1', 5432],
    ['[::1]', 5432],
    ['::1', 5432],
    ['::ffff:127.0.0.1', 5432],
    ['[::ffff:7f00:1]', 5432],
    ['0.0.0.0', 5432],
    ['::', 5432],
    ['169.254.169.254', 80],
    ['::ffff:169.254.169.254', 80],
    ['fd00:ec2::254', 80],
    ['fe80::1', 5432],
    ['fe80::1%eth0', 5432],
    ['fc00::1', 5432],
    ['10.0.0.5', 5432],
    ['172.20.0.5', 5432],
    ['192.168.0.5', 5432],
    ['100.64.0.5', 5432],
    ['224.0.0.1', 5432],
    ['localhost', 5432],
    ['metadata.example.com', 80],
    ['inside.corp', 5432],
    ['v6.example.com', 5432],
    // One bad address among good ones is enough (no picking the "good" one).
    ['rebind.example.com', 5432],
    // Not a TCP host at all: a socket path, a URL, a port glued on.
    ['/var/run/postgresql', 5432],
    ['postgres://127.0.0.1', 5432],
    ['127.0.0.1:5432', 5432],
    ['db.example.com/x', 5432],
    ['', 5432],
  ])('refuses %s:%i', async (host, port) => {
    await expect(policy.check(host, port)).rejects.toSatisfy(refusal);
  });

  it('says nothing in the refusal about what the name resolved to', async () => {
    const error = await policy.check('inside.corp', 5432).catch((e) => e);
    expect(error.message).toContain('inside.corp:5432');
    expect(error.message).not.toContain('10.1.2.3');
  });

  it('returns the checked address to connect to, and the name for TLS', async () => {
    expect(await policy.check('db.example.com', 5432)).toEqual({
      address: '52.95.110.1',
      family: 4,
      servername: 'db.example.com',
    });
    expect(await policy.check('DB.Example.COM.', 5432)).toMatchObject({ servername: 'db.example.com' });
    expect(await policy.check('dual.example.com', 5432)).toMatchObject({ address: '52.95.110.1' });
    expect(await policy.check('8.8.8.8', 5432)).toEqual({ address: '8.8.8.8', family: 4 });
    expect(await policy.check('[2600:1f18::1]', 5432)).toEqual({ address: '2600:1f18::1', family: 6 });
  });

  it('passes a resolver failure through (an outage to the caller, not a refusal)', async () => {
    await expect(policy.check('nowhere.example.com', 5432)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('resolves every time (a second answer is checked again, never cached)', async () => {
    const flip = { answer: ['52.95.110.1'] };
    const rebinding = new TargetPolicy([], async () => flip.answer);
    await expect(rebinding.check('flip.example.com', 5432)).resolves.toMatchObject({
      address: '52.95.110.1',
    });
    flip.answer = ['169.254.169.254'];
    await expect(rebinding.check('flip.example.com', 5432)).rejects.toSatisfy(refusal);
  });
});

describe('the operator allowlist', () => {
  const dns = fakeDns({
    'db.internal': ['10.1.2.3'],
    'other.internal': ['10.9.9.9'],
    localhost: ['127.0.0.1'],
  });

  it('allows exactly the embedded PostGIS port, not the rest of loopback', async () => {
    const policy = new TargetPolicy(parseAllowList('127.0.0.1:5433'), dns.lookup);
    await expect(policy.check('127.0.0.1', 5433)).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(policy.check('2130706433', 5433)).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(policy.check('::ffff:127.0.0.1', 5433)).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(policy.check('localhost', 5433)).resolves.toMatchObject({ address: '127.0.0.1' });
    for (const [host, port] of [
      ['127.0.0.1', 5432],
      ['127.0.0.1', 22],
      ['127.0.0.2', 5433],
      ['::1', 5433],
      ['169.254.169.254', 5433],
    ] as const) {
      await expect(policy.check(host, port), `${host}:${port}`).rejects.toSatisfy(refusal);
    }
  });

  it('allows CIDRs, port ranges, names and IPv6 in brackets', async () => {
    const policy = new TargetPolicy(
      parseAllowList('10.1.0.0/16:5432, 192.168.0.0/24:5000-5009 db.internal [fd00::/8]:5432'),
      dns.lookup,
    );
    await expect(policy.check('10.1.200.7', 5432)).resolves.toBeDefined();
    await expect(policy.check('192.168.0.9', 5005)).resolves.toBeDefined();
    await expect(policy.check('db.internal', 6543)).resolves.toMatchObject({
      address: '10.1.2.3',
      servername: 'db.internal',
    });
    await expect(policy.check('fd12::1', 5432)).resolves.toBeDefined();
    for (const [host, port] of [
      ['10.1.200.7', 5433],
      ['10.2.0.1', 5432],
      ['192.168.0.9', 5010],
      ['192.168.1.9', 5005],
      // The name's address is allowed through the name only.
      ['10.1.2.3', 6543],
      ['other.internal', 5432],
      ['fd12::1', 5433],
      ['169.254.169.254', 80],
    ] as const) {
      await expect(policy.check(host, port), `${host}:${port}`).rejects.toSatisfy(refusal);
    }
  });

  it('allows everything with *', async () => {
    const policy = new TargetPolicy(parseAllowList('*'), dns.lookup);
    await expect(policy.check('127.0.0.1', 1)).resolves.toBeDefined();
    await expect(policy.check('169.254.169.254', 80)).resolves.toBeDefined();
  });

  it.each([
    '10.0.0.0/33',
    '10.0.0.1:0',
    '10.0.0.1:70000',
    '10.0.0.1:9-3',
    '[::1',
    'db internal:x',
    'a..b',
    'http://x',
  ])('refuses the unreadable entry %j', (entry) => {
    expect(() => parseAllowList(entry)).toThrow(/allowed database hosts/);
  });

  it('reads an empty list as "public addresses only"', () => {
    expect(parseAllowList('')).toEqual([]);
    expect(parseAllowList(' , ')).toEqual([]);
    expect(parseAllowList(undefined)).toEqual([]);
  });
});
