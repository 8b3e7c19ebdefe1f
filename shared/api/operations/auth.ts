import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { AuthConsoleConfig, AuthMe, BrowserSession, PageCursor, pageQuery } from '../schemas.ts';

const cookieHeaders = {
  'Set-Cookie': '`__Host-session` (HttpOnly) and `csrf_token` (readable), both Secure, SameSite=Lax, Path=/',
};

/** The caller with its new session (login, refresh), idle until `idleExpiresAt`. */
const signedInExample = (idleExpiresAt: string) => ({
  ...ex.authMe,
  session_id: '2f9c41d8-5a7e-4c3b-9e1f-6d0a8b7c5e42',
  session_expires_at: '2026-03-02T21:15:00.000Z',
  session_idle_expires_at: idleExpiresAt,
});

export const getAuthMe = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
  }),
);

export const login = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
      response: signedInExample('2026-03-02T10:15:00.000Z'),
    },
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
  }),
);

export const refreshSession = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
      response: signedInExample('2026-03-02T10:45:00.000Z'),
    },
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
  }),
);

export const logout = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
  }),
);

export const getConsoleConfig = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
  }),
);

const sessionExample = {
  id: '2f9c41d8-5a7e-4c3b-9e1f-6d0a8b7c5e42',
  principal: 'alice',
  principal_id: 'jwt:alice',
  auth_method: 'jwt',
  api_key_id: null,
  issuer: 'https://login.example.org/realms/gis',
  super_admin: false,
  workspace_roles: [{ workspace: ex.ids.workspace, role: 'editor' }],
  workspace_role_count: 1,
  created_at: '2026-03-02T09:15:00.000Z',
  refreshed_at: '2026-03-02T09:45:00.000Z',
  expires_at: '2026-03-02T21:15:00.000Z',
  idle_expires_at: '2026-03-02T10:45:00.000Z',
  version: 2,
};

export const listBrowserSessions = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listBrowserSessions',
    method: 'GET',
    path: '/api/v1/auth/sessions',
    handler: 'functions/auth/list-browser-sessions.ts',
    permission: 'global',
    summary: 'List the browser sessions not yet expired, newest first (super_admin)',
    description:
      'One entry per session (a refresh keeps its id). Sessions signed in before this listing existed appear after their first refresh (ADR 0134).',
    tags: ['auth'],
    request: { query: pageQuery(100) },
    responses: {
      200: {
        description: 'sessions',
        schema: z
          .strictObject({ sessions: z.array(BrowserSession), next_cursor: PageCursor })
          .check(z.meta({ id: 'BrowserSessionList' })),
      },
      400: { description: 'bad limit or cursor' },
    },
    examples: { response: { sessions: [sessionExample] } },
    data: ['Query'],
  }),
);

export const revokeBrowserSession = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'revokeBrowserSession',
    method: 'DELETE',
    path: '/api/v1/auth/sessions/{session}',
    handler: 'functions/auth/revoke-browser-session.ts',
    permission: 'global',
    summary: 'Revoke a browser session: its next request is a 401 (super_admin)',
    description:
      'Ends every cookie pair of the session (the current one, the ones a refresh replaced still in their grace, any a concurrent refresh added), then its listing entry; audited. If-Match names the listed `version` (412 when the session was refreshed since); without it the session is revoked whatever its version (ADR 0134).',
    tags: ['auth'],
    request: {
      params: z.strictObject({
        session: z
          .uuid()
          .check(
            z.meta({ description: 'The browser session id (`id` in the list, `session_id` of getAuthMe).' }),
          ),
      }),
    },
    responses: {
      204: { description: 'revoked' },
      400: { description: 'session is not a UUID' },
      404: { description: 'no such session (never listed, expired, logged out or already revoked)' },
    },
    examples: { params: { session: '2f9c41d8-5a7e-4c3b-9e1f-6d0a8b7c5e42' } },
    data: ['GetItem', 'DeleteItem'],
  }),
);
