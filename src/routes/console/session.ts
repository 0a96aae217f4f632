import type { FastifyInstance } from 'fastify';
import { CONSOLE_TAG, CSRF_HEADER, CSRF_SCHEME, ConsoleSession, SESSION_SCHEME, SignInBody, SIGN_IN_COOKIE } from '../../contract/console.js';
import { NoBody, responses } from '../../contract/responses.js';
import { sessionCookieValue, type ConsoleSessions } from '../../console/sessions.js';
import { AppError } from '../../errors.js';
import type { KeyStore, SessionRecord } from '../../console/sessions.js';
import type { RoutePaths } from '../route-types.js';

const noSession = (): AppError => new AppError('session_expired', 'No console session: sign in with an API key');

/**
 * The web console's sign-in (G361): `POST /console/session` exchanges an API key for the session
 * cookie, `GET` answers the session (the console reads its CSRF token after a reload), `DELETE`
 * signs out (with the CSRF token, G362). Outside the API's scope: the key is checked here. In the
 * OpenAPI document (G372) with the cookie and the CSRF header as its security schemes, so the
 * console's types (console/src/api.ts) are those of a documented contract.
 */
export function registerConsoleSessionRoutes(
  app: FastifyInstance,
  sessions: ConsoleSessions,
  keys: Pick<KeyStore, 'findActiveByHash'>,
  paths: RoutePaths,
): void {
  const reply = (key: { id: string; name: string; role?: 'caller' | 'admin'; accountId: string }, record: SessionRecord): ConsoleSession => ({
    object: 'console_session',
    key: { id: key.id, name: key.name, role: key.role ?? 'caller', account_id: key.accountId },
    csrf_token: record.csrfToken,
    expires_at: Math.floor(record.expiresAt / 1000),
    paths: { power_prefix: paths.powerPrefix, api_prefix: paths.apiPrefix },
  });

  app.post<{ Body: SignInBody }>(
    '/console/session',
    {
      schema: {
        tags: [CONSOLE_TAG],
        summary: 'Sign in to the web console: exchanges an API key for a session cookie',
        security: [],
        body: SignInBody,
        response: responses({ 200: ConsoleSession }, [400, 401, 413], { successHeaders: SIGN_IN_COOKIE }),
      },
    },
    async (request, res) => {
      const { key, record, cookieValue } = await sessions.signIn(request.body.api_key);
      void res.header('set-cookie', sessions.setCookie(cookieValue, record)).header('cache-control', 'no-store');
      return reply(key, record);
    },
  );

  app.get(
    '/console/session',
    {
      schema: {
        tags: [CONSOLE_TAG],
        summary: 'The web console session of the cookie sent (the console reads its CSRF token after a reload)',
        security: [{ [SESSION_SCHEME]: [] }],
        response: responses({ 200: ConsoleSession }, [401]),
      },
    },
    async (request, res) => {
      const value = sessionCookieValue(request.headers.cookie);
      const record = value === undefined ? undefined : await sessions.find(value);
      if (!record) throw noSession();
      const key = await keys.findActiveByHash(record.keyHash);
      if (!key) throw noSession();
      void res.header('cache-control', 'no-store');
      return reply(key, record);
    },
  );

  app.delete(
    '/console/session',
    {
      schema: {
        tags: [CONSOLE_TAG],
        summary: 'Sign out of the web console: the session cookie and its CSRF token in `x-csrf-token`',
        security: [{ [SESSION_SCHEME]: [], [CSRF_SCHEME]: [] }],
        response: responses({ 204: NoBody('Signed out: the session is ended and the cookie cleared') }, [401, 403]),
      },
    },
    async (request, res) => {
      const value = sessionCookieValue(request.headers.cookie);
      if (value === undefined) throw noSession();
      await sessions.requestSession(value, 'DELETE', request.headers[CSRF_HEADER]);
      await sessions.signOut(value);
      void res.header('set-cookie', sessions.clearCookie()).code(204);
      return null;
    },
  );
}
