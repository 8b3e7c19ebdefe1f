import { defineOperation } from '../operation.ts';
import { AuthMe } from '../schemas.ts';

export const getAuthMe = defineOperation({
  operationId: 'getAuthMe',
  method: 'GET',
  path: '/api/v1/auth/me',
  handler: 'functions/auth/get-auth-me.ts',
  permission: 'authenticated',
  summary: 'Who am I: principal, auth method, super_admin flag and workspaces with role',
  tags: ['auth'],
  request: {},
  responses: { 200: { description: 'the caller', schema: AuthMe } },
  data: ['GetItem'],
});
