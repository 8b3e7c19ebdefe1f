import { defineOperation } from '../operation.ts';

export const getOpenAPI = defineOperation({
  operationId: 'getOpenAPI',
  method: 'GET',
  path: '/api/v1/openapi.json',
  handler: 'functions/meta/get-open-api.ts',
  permission: 'public',
  summary: 'This OpenAPI 3.1 document',
  tags: ['meta'],
  request: {},
  responses: { 200: { description: 'the OpenAPI document' } },
  data: [],
});
