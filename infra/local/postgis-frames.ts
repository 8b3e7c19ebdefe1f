/**
 * The embedded PostGIS's front door (postgis-worker.ts) hands a connection's bytes to
 * pglite-socket's handler, which joins each piece it is given to the bytes it already holds
 * (`Buffer.concat`, a new buffer each time) until a message is whole. A message of n bytes read in
 * the socket's 64 KiB pieces was so copied about n² / 128 KiB bytes over, every copy into freshly
 * allocated memory: a loader's chunk of rows, one message of several hundred KB, was joined once a
 * piece, four to five times its size copied (ADR 0031, update of 2026-12-02). Framed here first,
 * the handler is given whole messages only: each is joined once.
 */
import type { Socket } from 'node:net';

/**
 * Splits a connection's bytes after the last whole message (the startup message first, untyped:
 * its length at offset 0; then typed messages: a type byte, then the length). A message's length
 * counts itself, so one under 4 bytes is malformed: it is passed on at once, for the handler to
 * refuse as it would have.
 */
export class MessageFrames {
  #pieces: Buffer[] = [];
  #held = 0;
  /** Where the message after the held whole ones ends in the held bytes, once its header is held. */
  #end: number | undefined;
  #untyped: boolean;

  /** @param startup whether the first message is the untyped startup message */
  constructor(startup = true) {
    this.#untyped = startup;
  }

  /** Takes the next bytes read; returns the whole messages they complete (with any before), if any. */
  push(data: Buffer): Buffer | undefined {
    this.#pieces.push(data);
    this.#held += data.length;
    /** Where the whole messages held end (the held bytes from there on are of one not yet whole). */
    let whole = 0;
    for (;;) {
      if (this.#end === undefined) {
        const header = this.#untyped ? 4 : 5;
        if (this.#held - whole < header) break;
        const length = this.#int32At(whole + header - 4);
        this.#end = whole + (length < 4 ? header : this.#untyped ? length : 1 + length);
        this.#untyped = false;
      }
      if (this.#held < this.#end) break;
      whole = this.#end;
      this.#end = undefined;
    }
    if (whole === 0) return undefined;
    const held = this.#pieces.length === 1 ? (this.#pieces[0] as Buffer) : Buffer.concat(this.#pieces);
    const rest = held.subarray(whole);
    this.#pieces = rest.length > 0 ? [rest] : [];
    this.#held = rest.length;
    if (this.#end !== undefined) this.#end -= whole;
    return held.subarray(0, whole);
  }

  /** The big-endian int32 at `offset` of the held bytes (it may span pieces). */
  #int32At(offset: number): number {
    let value = 0;
    let at = offset;
    let read = 0;
    for (const piece of this.#pieces) {
      while (read < 4 && at < piece.length) {
        value = value * 256 + (piece[at] as number);
        at++;
        read++;
      }
      if (read === 4) break;
      at -= piece.length;
    }
    return value | 0;
  }
}

/**
 * From now on, the socket's 'data' listeners are given whole protocol messages (the startup
 * message first): bytes of a message not yet whole are held until it is.
 */
export function inWholeMessages(socket: Socket): void {
  const frames = new MessageFrames();
  const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
  socket.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
    if (event !== 'data') return emit(event, ...args);
    const whole = frames.push(args[0] as Buffer);
    return whole === undefined ? socket.listenerCount('data') > 0 : emit('data', whole);
  }) as Socket['emit'];
}
