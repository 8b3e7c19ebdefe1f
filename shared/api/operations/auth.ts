import * as z from 'zod/mini';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { AuthConsoleConfig, AuthMe } from '../schemas.ts';

const cookieHeaders = {
  'Set-Cookie': '`__Host-session` (HttpOnly) and `csrf_token` (readable), both Secure, SameSite=Lax, Path=/',
};

export const getAuthMe = defineOperation({
  operationId: 'getAuthMe',
  method: 'GET',
  path: '/api/v1/auth/me',
  handler: 'functions/auth/get-auth-me.ts',
  permission: 'authenticated',
  summary: 'Who am I: principal, auth method, super_admin flag, session expiry and workspaces with role',
  tags: ['auth'],
  request: {},
  responses: { 200: { description: 'the caller', schema: AuthMe } },
  examples: {
    response: ex.authMe,
  },
  data: ['GetItem', 'Query'],
});

export const login = defineOperation({
  operationId: 'login',
  method: 'POST',
  path: '/api/v1/auth/login',
  handler: 'functions/auth/login.ts',
  permission: 'public',
  summary: 'Exchange a JWT or an API key for a browser session',
  description:
    'Sets `__Host-session` and `csrf_token`. Later unsafe requests with the session cookie must send `X-CSRF-Token` equal to the `csrf_token` cookie. Failed logins are limited per client address (429).',
  tags: ['auth'],
  request: { body: z.strictObject({ token: z.string().check(z.minLength(1), z.maxLength(16384)) }) },
  responses: {
    201: { description: 'session created', schema: AuthMe, headers: cookieHeaders },
    400: { description: 'bad request' },
  },
  examples: {
    request: { token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl' },
    response: {
      ...ex.authMe,
      session_id: '2f9c41d8-5a7e-4c3b-9e1f-6d0a8b7c5e42',
      session_expires_at: '2026-03-02T21:15:00.000Z',
      session_idle_expires_at: '2026-03-02T10:15:00.000Z',
    },
  },
  data: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
});

export const refreshSession = defineOperation({
  operationId: 'refreshSession',
  method: 'POST',
  path: '/api/v1/auth/refresh',
  handler: 'functions/auth/refresh-session.ts',
  permission: 'authenticated',
  summary: 'Rotate the current browser session',
  description:
    'New session and CSRF values; the previous pair stays valid for 30 s. Of concurrent refreshes one wins (200) and the rest get 409.',
  tags: ['auth'],
  request: {},
  responses: {
    200: { description: 'refreshed identity', schema: AuthMe, headers: cookieHeaders },
    400: { description: 'the request carries header credentials, not a session' },
    409: { description: 'the session was already refreshed by another request' },
  },
  examples: {
    response: {
      ...ex.authMe,
      session_id: '2f9c41d8-5a7e-4c3b-9e1f-6d0a8b7c5e42',
      session_expires_at: '2026-03-02T21:15:00.000Z',
      session_idle_expires_at: '2026-03-02T10:45:00.000Z',
    },
  },
  data: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
});

export const logout = defineOperation({
  operationId: 'logout',
  method: 'POST',
  path: '/api/v1/auth/logout',
  handler: 'functions/auth/logout.ts',
  permission: 'authenticated',
  summary: 'End the current browser session and clear its cookies',
  tags: ['auth'],
  request: {},
  responses: { 204: { description: 'logged out', headers: cookieHeaders } },
  data: ['DeleteItem'],
});

export const getConsoleConfig = defineOperation({
  operationId: 'getConsoleConfig',
  method: 'GET',
  path: '/api/v1/console/config',
  handler: 'functions/auth/get-console-config.ts',
  permission: 'public',
  summary: 'Public console configuration (no secrets)',
  tags: ['auth'],
  request: {},
  responses: {
    200: {
      description: 'console configuration',
      schema: z.strictObject({ auth: AuthConsoleConfig }).check(z.meta({ id: 'ConsoleConfig' })),
    },
  },
  examples: {
    response: {
      auth: {
        enabled: true,
        method: 'oidc',
        password_login: false,
        token_login: true,
        oidc: {
          enabled: true,
          issuer: 'https://login.example.org/realms/gis',
          client_id: 'geoplane-console',
          redirect_uri: 'https://console.example.org/callback',
          scopes: ['openid', 'profile', 'email'],
          group_claims: ['groups'],
        },
      },
    },
  },
  data: [],
});
