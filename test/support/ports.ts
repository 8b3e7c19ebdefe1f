import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports for servers a test starts in another process (a local host, DynamoDB Local, PostgreSQL).
 *
 * A port the kernel hands out for `listen(0)` comes from the ephemeral range, the same range it
 * draws the source port of every outgoing connection from: between closing the probe and the
 * child binding it, any client in the run may take it (EADDRINUSE, seen in CI). So the ports come
 * from below that range, where the kernel never assigns one on its own, and each vitest worker
 * draws from its own slice of it, so two workers never hand out the same port either.
 */
const LOWEST = 10_000;
const SLICES = 8;

function ephemeralStart(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    if (Number.isInteger(first) && first > LOWEST + SLICES * 100) return first;
  } catch {
    // not Linux: IANA's dynamic range starts at 49152
  }
  return 49_152;
}

const sliceSize = Math.floor((ephemeralStart() - LOWEST) / SLICES);
const slice = Number(process.env.VITEST_POOL_ID ?? 0) % SLICES;
let next = Math.floor(Math.random() * sliceSize);

/**
 * Ports the WHATWG Fetch standard blocks ("bad ports": Node's fetch refuses them, as browsers do)
 * at or above {@link LOWEST}: a host on one of them would be unreachable to fetch-based clients.
 */
const FETCH_BLOCKED = new Set([10080]);

function bindable(port: number): Promise<boolean> {
  if (FETCH_BLOCKED.has(port)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    // 0.0.0.0 conflicts with a listener on any local address, 127.0.0.1 and 127.0.0.2 included.
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

/** A TCP port nothing listens on now, that no other worker of the run and no outgoing connection will take. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < sliceSize; tries++) {
    const port = LOWEST + slice * sliceSize + (next++ % sliceSize);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${LOWEST + slice * sliceSize}–${LOWEST + (slice + 1) * sliceSize - 1}`);
}
