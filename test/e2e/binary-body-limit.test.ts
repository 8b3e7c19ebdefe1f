import { describe, expect, it } from 'vitest';
import { LAMBDA_INVOKE_PAYLOAD_BYTES, MAX_BINARY_BODY_BYTES } from '#api/payload-limits.ts';
import { MAX_ASSET_BYTES } from '#domain/style-assets.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';

// ADR 0116: a binary body reaches Lambda base64-encoded inside the event, and Lambda refuses an
// event over 6 MB before the function runs. The local host decides as API Gateway + Lambda do:
// a body whose event fits reaches the function (which caps raw bytes at MAX_BINARY_BODY_BYTES), a
// larger one is the gateway's 413, in the standard body; never a 5xx.

const PNG_HEADER = Buffer.from('89504e470d0a1a0a', 'hex');
const png = (bytes: number) => Buffer.concat([PNG_HEADER, Buffer.alloc(bytes - PNG_HEADER.length, 7)]);
/** The smallest body whose base64 alone is over Lambda's invoke payload limit. */
const OVER_INVOKE = (LAMBDA_INVOKE_PAYLOAD_BYTES / 4) * 3 + 1;

const put = (ws: string, name: string, body: Buffer, type = 'image/png') =>
  call('PUT', `/workspaces/${ws}/style-assets/${name}`, {
    headers: { ...asSuperAdmin(), 'Content-Type': type },
    body,
  });

describe('binary bodies near Lambda’s 6 MB invoke payload (local host = AWS)', () => {
  it.each([
    ['at the binary cap', MAX_BINARY_BODY_BYTES],
    ['one byte over the binary cap', MAX_BINARY_BODY_BYTES + 1],
  ])(
    'passes a body %s to the function, which answers the standard 413 of its own limit',
    async (_what, size) => {
      // Prepare
      const ws = await createWorkspace();

      // Act
      const res = await put(ws.id, 'big', png(size), 'application/octet-stream');

      // Assess: the function ran (its detail names the operation's limit), and nothing is stored.
      expectError(res, 413, 'body_too_large');
      expect((res.body as { detail: string }).detail).toBe(
        `The request body is ${size} bytes; the limit is ${MAX_ASSET_BYTES}.`,
      );
      expectError(
        await call('GET', `/workspaces/${ws.id}/style-assets/big`, { headers: asSuperAdmin() }),
        404,
      );
    },
  );

  it.each([
    ['whose base64 is just over 6 MB', OVER_INVOKE],
    ['of 5 MiB (the highest maxBodyBytes a stage may set)', 5 * 1024 * 1024],
  ])('answers a binary body %s with the gateway’s standard 413, not a 5xx', async (_what, size) => {
    // Prepare
    const ws = await createWorkspace();

    // Act
    const res = await put(ws.id, 'huge', png(size));

    // Assess: API Gateway's own answer (REQUEST_TOO_LARGE), reshaped like every gateway response.
    expectError(res, 413, 'body_too_large');
    expect((res.body as { detail: string }).detail).toBe('The request body exceeds the configured limit.');
    expectError(
      await call('GET', `/workspaces/${ws.id}/style-assets/huge`, { headers: asSuperAdmin() }),
      404,
    );
  });

  it('decides by the encoded event: the same bytes as a JSON route’s text body fit where base64 would not', async () => {
    // Prepare: 4.8 MB of text is 6.4 MB once base64-encoded, but travels as text on a JSON route.
    const size = 4_800_000;
    const text = `{"name":"${'x'.repeat(size - 11)}"}`;
    expect(Buffer.byteLength(text)).toBe(size);

    // Act
    const asText = await call('POST', '/workspaces', {
      headers: { ...asSuperAdmin(), 'Content-Type': 'application/json' },
      body: text,
    });
    const asBinary = await call('POST', '/workspaces', {
      headers: { ...asSuperAdmin(), 'Content-Type': 'application/octet-stream' },
      body: Buffer.from(text),
    });

    // Assess: as text it reaches the function (its MAX_BODY_BYTES 413); as a binary media type the
    // event is over 6 MB and the gateway answers.
    expectError(asText, 413, 'body_too_large');
    expect((asText.body as { detail: string }).detail).toMatch(
      /^The request body is 4800000 bytes; the limit is \d+\.$/,
    );
    expectError(asBinary, 413, 'body_too_large');
    expect((asBinary.body as { detail: string }).detail).toBe(
      'The request body exceeds the configured limit.',
    );
  });
});
