export const discoverCsv = async (..._a: unknown[]): Promise<never> => {
  throw new Error('todo');
};
export async function* readCsv(..._a: unknown[]): AsyncGenerator<never> {}
