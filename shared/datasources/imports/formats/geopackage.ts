export const discoverGeoPackage = async (..._a: unknown[]): Promise<never> => {
  throw new Error('todo');
};
export async function* readGeoPackage(..._a: unknown[]): AsyncGenerator<never> {}
