declare module 'virtual:operations' {
  /** `METHOD /api/v1/path/{template}` → the operation and the permission it needs. */
  const table: Record<string, { operationId: string; permission: string }>;
  export default table;
}
