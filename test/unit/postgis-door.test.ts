import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Door, HOLD_MS } from '#infra/local/postgis-supervisor.ts';

// The embedded PostGIS's public port (ADR 0108): relays to the current worker, holds connections
// while a worker restarts, never leaves one half-open. Fake workers here: TCP servers on loopback.

const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
/** Stands for a startup packet: any first message that is not an 8-byte SSL/GSS request. */
const STARTUP = Buffer.from([0, 0, 0, 12, 0, 3, 0, 0, 0x75, 0x00, 0x78, 0x00]);

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface FakeWorker {
  port: number;
  /** What each connection sent, in order of arrival. */
  received: Buffer[];
  connections: Socket[];
}

/** A worker that answers each connection's first bytes with `answer(n)` (n from 1), or stays silent (undefined). */
async function fakeWorker(answer: (n: number) => string | 'hang-up' | undefined): Promise<FakeWorker> {
  const worker: FakeWorker = { port: 0, received: [], connections: [] };
  const server: Server = createServer((socket) => {
    const n = worker.connections.push(socket);
    worker.received[n - 1] = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (data) => {
      const first = (worker.received[n - 1] as Buffer).length === 0;
      worker.received[n - 1] = Buffer.concat([worker.received[n - 1] as Buffer, data]);
      if (!first) return;
      const reply = answer(n);
      if (reply === 'hang-up') socket.destroy();
      else if (reply !== undefined) socket.write(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  worker.port = (server.address() as { port: number }).port;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of worker.connections) s.destroy();
        server.close(() => resolve());
      }),
  );
  return worker;
}

async function door(): Promise<Door> {
  const d = new Door();
  await d.listen(0);
  closers.push(() => d.close());
  return d;
}

/** A client of the door: what it received, and whether the door closed it. */
async function client(
  d: Door,
): Promise<{ socket: Socket; text(): string; bytes(): Buffer; closed: Promise<number> }> {
  const socket = connect({ host: '127.0.0.1', port: d.port });
  socket.on('error', () => {});
  let bytes = Buffer.alloc(0);
  socket.on('data', (data) => {
    bytes = Buffer.concat([bytes, data]);
  });
  const started = Date.now();
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  closers.push(() => socket.destroy());
  return { socket, text: () => bytes.toString('latin1'), bytes: () => bytes, closed };
}

const until = async (check: () => boolean, ms = 3_000) => {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('the embedded PostGIS door', () => {
  it('refuses SSL itself and relays the startup and everything after it to the worker', async () => {
    const worker = await fakeWorker(() => 'R-ok');
    const d = await door();
    d.open(worker.port);
    const c = await client(d);
    c.socket.write(SSL_REQUEST);
    await until(() => c.text() === 'N');
    c.socket.write(STARTUP);
    await until(() => c.text() === 'NR-ok');
    c.socket.write('more');
    await until(() => worker.received[0]?.toString('latin1').endsWith('more') === true);
    expect(worker.received[0]).toEqual(Buffer.concat([STARTUP, Buffer.from('more')]));
  });

  it('holds a connection while no worker serves, and relays what it sent once one does', async () => {
    const worker = await fakeWorker(() => 'R-ok');
    const d = await door();
    const c = await client(d);
    c.socket.write(SSL_REQUEST);
    c.socket.write(STARTUP);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(worker.connections).toHaveLength(0);
    d.open(worker.port);
    await until(() => c.text() === 'NR-ok');
    expect(worker.received[0]).toEqual(STARTUP);
  });

  it('answers "starting up" (FATAL 57P03) to a connection held for HOLD_MS, in time for a retry within pg\'s 2 s connect timeout', async () => {
    const d = await door();
    const c = await client(d);
    c.socket.write(STARTUP);
    const closedAfter = await c.closed;
    expect(c.bytes()[0]).toBe('E'.charCodeAt(0));
    expect(c.text()).toContain('C57P03\0');
    expect(c.text()).toContain('Mthe database system is starting up\0');
    expect(closedAfter).toBeGreaterThanOrEqual(HOLD_MS - 50);
    expect(closedAfter).toBeLessThan(2_000);
  });

  it('on a cut, closes connections the old worker answered and replays the others to the next worker', async () => {
    const old = await fakeWorker((n) => (n === 1 ? 'R-answered' : undefined));
    const next = await fakeWorker(() => 'R-next');
    const d = await door();
    d.open(old.port);
    const answered = await client(d);
    answered.socket.write(STARTUP);
    await until(() => answered.text() === 'R-answered');
    const waiting = await client(d);
    waiting.socket.write(STARTUP);
    await until(() => old.received[1]?.length === STARTUP.length);
    // The old worker is restarting (its sockets may never close: the door cuts them itself).
    d.hold();
    d.cut();
    await answered.closed;
    d.open(next.port);
    await until(() => waiting.text() === 'R-next');
    expect(next.received).toEqual([STARTUP]);
    expect(answered.text()).toBe('R-answered');
  });

  it('on a cut, still relays what the old worker sent an answered connection before it went (its FATAL), then closes it', async () => {
    const old = await fakeWorker(() => 'R-answered');
    const d = await door();
    d.open(old.port);
    const c = await client(d);
    c.socket.write(STARTUP);
    await until(() => c.text() === 'R-answered');
    // The worker tells its client why and closes; its parent hears of it at once and cuts, before
    // the door has read those last bytes.
    (old.connections[0] as Socket).end('E-fatal');
    d.hold();
    d.cut();
    await c.closed;
    expect(c.text()).toBe('R-answeredE-fatal');
  });

  it('replays a connection whose worker hung up before answering', async () => {
    const worker = await fakeWorker((n) => (n === 1 ? 'hang-up' : 'R-second'));
    const d = await door();
    d.open(worker.port);
    const c = await client(d);
    c.socket.write(STARTUP);
    await until(() => c.text() === 'R-second');
    expect(worker.received).toEqual([STARTUP, STARTUP]);
  });

  it('closes its connections and its port on close', async () => {
    const worker = await fakeWorker(() => 'R-ok');
    const d = await door();
    d.open(worker.port);
    const c = await client(d);
    c.socket.write(STARTUP);
    await until(() => c.text() === 'R-ok');
    const port = d.port;
    d.close();
    await c.closed;
    const refused = await new Promise<string>((resolve) => {
      const s = connect({ host: '127.0.0.1', port });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      s.on('connect', () => {
        s.destroy();
        resolve('connected');
      });
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});
