import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { inWholeMessages, MessageFrames } from '#infra/local/postgis-frames.ts';

/**
 * The embedded PostGIS's front door gives pglite-socket's handler whole protocol messages only
 * (ADR 0031, update of 2026-12-02): the handler joins each piece it is given to what it holds, so
 * pieces of a large message cost a copy each of all the message so far.
 */
const typed = (type: string, bodyBytes: number, fill = 0x61) => {
  const message = Buffer.alloc(5 + bodyBytes, fill);
  message.write(type, 0, 'latin1');
  message.writeInt32BE(4 + bodyBytes, 1);
  return message;
};

function startupMessage(): Buffer {
  const params = Buffer.from('user\0loader\0database\0postgres\0\0', 'latin1');
  const message = Buffer.alloc(8 + params.length);
  message.writeInt32BE(message.length, 0);
  message.writeInt32BE(196608, 4);
  params.copy(message, 8);
  return message;
}

/** A login's bytes after the password: the startup first, then messages of every size. */
const messages = () => [
  startupMessage(),
  typed('P', 40),
  typed('B', 300_000, 0x42),
  typed('E', 5),
  typed('S', 0),
  typed('Q', 70_000, 0x51),
  typed('S', 0),
];

/** Splits `bytes` into the lengths of whole messages (the first untyped); throws at a partial one. */
function wholeLengths(bytes: Buffer, startupFirst: boolean): number[] {
  const lengths: number[] = [];
  let at = 0;
  let untyped = startupFirst;
  while (at < bytes.length) {
    const length = untyped ? bytes.readInt32BE(at) : 1 + bytes.readInt32BE(at + 1);
    if (at + length > bytes.length) throw new Error(`a partial message at byte ${at}`);
    lengths.push(length);
    at += length;
    untyped = false;
  }
  return lengths;
}

describe('MessageFrames: a connection’s bytes in whole messages', () => {
  it.each([1, 3, 4, 5, 7, 1000, 65_536, 400_000])(
    'read in pieces of %i bytes, gives every byte once, in order, each time ending after a whole message',
    (size) => {
      // Prepare
      const all = messages();
      const stream = Buffer.concat(all);
      const frames = new MessageFrames();
      const given: Buffer[] = [];

      // Act
      for (let at = 0; at < stream.length; at += size) {
        const whole = frames.push(stream.subarray(at, at + size));
        if (whole) given.push(whole);
      }

      // Assess: the same bytes; each handed-on part whole messages only; the large ones not split
      expect(Buffer.concat(given).equals(stream)).toBe(true);
      let startupFirst = true;
      for (const part of given) {
        expect(() => wholeLengths(part, startupFirst)).not.toThrow();
        startupFirst = false;
      }
      expect(given.flatMap((part, i) => wholeLengths(part, i === 0))).toEqual(all.map((m) => m.length));
      expect(given.length).toBeLessThanOrEqual(all.length);
    },
  );

  it('passes a message whose length is impossible on at once (for the handler to refuse)', () => {
    const frames = new MessageFrames(false);
    const bad = Buffer.from([0x51, 0, 0, 0, 1, 0x41, 0x42]);
    expect(frames.push(bad)?.subarray(0, 5).equals(bad.subarray(0, 5))).toBe(true);
  });
});

describe('inWholeMessages: a socket’s data listeners', () => {
  it('are given whole messages however the peer’s writes were cut, and every other event as it came', async () => {
    // Prepare: a loopback connection; the client writes the messages cut at odd places, pausing between
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect(port, '127.0.0.1');
    const [socket] = await accepted;
    inWholeMessages(socket);
    const given: Buffer[] = [];
    socket.on('data', (data: Buffer) => given.push(data));
    const ended = once(socket, 'end');

    // Act
    const stream = Buffer.concat(messages());
    for (let at = 0; at < stream.length; at += 9_999) {
      client.write(stream.subarray(at, at + 9_999));
      await new Promise((resolve) => setImmediate(resolve));
    }
    client.end();
    await ended;
    socket.destroy();
    server.close();

    // Assess
    expect(Buffer.concat(given).equals(stream)).toBe(true);
    expect(given.flatMap((part, i) => wholeLengths(part, i === 0))).toEqual(messages().map((m) => m.length));
  });
});
