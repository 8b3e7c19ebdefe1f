export const discoverFlatGeobuf = async (..._a: unknown[]): Promise<never> => {
  throw new Error('todo');
};
export async function* readFlatGeobuf(..._a: unknown[]): AsyncGenerator<never> {}
