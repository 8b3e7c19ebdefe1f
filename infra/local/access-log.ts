import type { IncomingMessage, ServerResponse } from 'node:http';

/** The response header that carries the request id, as API Gateway's `x-amzn-RequestId`. */
export const REQUEST_ID_HEADER = 'x-amzn-RequestId';

/**
 * The local host's access log (ADR 0090): one plain-text line per request on stdout,
 * `access <method> <path> <status> <ms>ms <request id>`, written when the answer is sent (or the
 * connection dropped: `aborted` at the end). The path is logged without its query string (a
 * cursor or a filter is the client's data); headers and bodies never are.
 * `GEOPLANE_ACCESS_LOG=off` turns it off.
 */
export function accessLog(
  enabled: boolean,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (!enabled) return;
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const ms = Number((process.hrtime.bigint() - started) / 1_000_000n);
      const path = (req.url ?? '/').split('?')[0] || '/';
      const id = String(res.getHeader(REQUEST_ID_HEADER) ?? '-');
      const end = res.writableFinished ? '' : ' aborted';
      write(`access ${req.method ?? '-'} ${path} ${res.statusCode} ${ms}ms ${id}${end}`);
    });
  };
}
