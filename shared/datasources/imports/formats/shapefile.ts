export const discoverShapefileZip = async (..._a: unknown[]): Promise<never> => {
  throw new Error('todo');
};
export async function* readShapefileZip(..._a: unknown[]): AsyncGenerator<never> {}
