/**
 * Records the text of every query `client` sends from now on, in order (the round-trip tests);
 * `restore()` puts the client's own `query` back (a pooled client goes back to its pool).
 */
export function sentQueries(client: object): { sent: string[]; restore: () => void } {
  const sent: string[] = [];
  const target = client as { query: (...args: unknown[]) => unknown };
  const own = target.query;
  const original = own.bind(client);
  target.query = (...args: unknown[]) => {
    const config = args[0] as string | { text: string };
    sent.push(typeof config === 'string' ? config : config.text);
    return original(...args);
  };
  return {
    sent,
    restore: () => {
      target.query = own;
    },
  };
}
