/** Turning whatever a library throws into an ImportInputError the user can act on. */
import { ImportInputError } from '#domain/import-sources.ts';

/** True for the error an aborted signal raises (passed through untouched). */
export const isAbortError = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');

/**
 * Rethrows ImportInputErrors and AbortErrors as they are; anything else (a library's Error or
 * TypeError) becomes ImportInputError(code, "<what>: <the library's message>").
 */
export const asInputError = (error: unknown, code: ImportInputError['code'], what: string): Error => {
  if (error instanceof ImportInputError || isAbortError(error)) return error as Error;
  const message = error instanceof Error ? error.message : String(error);
  return new ImportInputError(code, `${what}: ${message}`);
};

/** True for the TypeError a fatal TextDecoder throws on bytes that aren't UTF-8. */
export const isInvalidUtf8 = (error: unknown): boolean =>
  error instanceof TypeError && (error as { code?: string }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA';

/** The ImportInputError for bytes that aren't UTF-8, naming where. */
export const invalidUtf8 = (where: string): ImportInputError =>
  new ImportInputError(
    'invalid_utf8',
    `The text is not valid UTF-8 at ${where}. Save the file as UTF-8 (or, for a shapefile, add a .cpg file naming its encoding).`,
  );

/** Throws the signal's reason when it has been aborted. */
export const checkAborted = (signal: AbortSignal | undefined): void => {
  signal?.throwIfAborted();
};
