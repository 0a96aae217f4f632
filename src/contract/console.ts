import { Type, type Static } from '../typebox.js';
import { closed } from './admin-common.js';
import { KEY_ROLES } from './admin-keys.js';
import { StringEnum } from './schema-helpers.js';

/**
 * The web console's sign-in (G361): the body exchanging an API key for a session cookie and the
 * session it answers. The console (console/) imports these types, so a change here breaks its build.
 */
export const CONSOLE_TAG = 'console';

/**
 * The OpenAPI security schemes of a console session (G372): the cookie set by the sign-in, and the
 * session's CSRF token, which every change made with the cookie sends (G362).
 */
export const SESSION_COOKIE = 'mediagate_session';
export const CSRF_HEADER = 'x-csrf-token';
export const SESSION_SCHEME = 'console_session';
export const CSRF_SCHEME = 'console_csrf';
export const CONSOLE_SECURITY_SCHEMES = {
  [SESSION_SCHEME]: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description:
      "The web console's session cookie (G361), set by `POST /console/session`; it authenticates the public and admin APIs as the key signed in with",
  },
  [CSRF_SCHEME]: {
    type: 'apiKey',
    in: 'header',
    name: CSRF_HEADER,
    description: "The session's `csrf_token`: required with the cookie on every POST, PUT, PATCH and DELETE (G362)",
  },
} as const;

/** The header of a sign-in's 200: the session cookie. */
export const SIGN_IN_COOKIE = {
  'set-cookie': Type.String({
    description: `\`${SESSION_COOKIE}=<32 random bytes>; Path=<public path>/; Max-Age=<session>; HttpOnly; SameSite=Strict\`, plus \`Secure\` under an https \`MEDIAGATE_PUBLIC_URL\` (G363)`,
  }),
};

export const SignInBody = Type.Object(
  {
    api_key: Type.String({ minLength: 1, maxLength: 256, description: 'The API key to sign in with; it is not kept anywhere, only its session' }),
  },
  { ...closed, title: 'SignInBody' },
);
export type SignInBody = Static<typeof SignInBody>;

export const ConsoleSession = Type.Object(
  {
    object: Type.Literal('console_session'),
    key: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        role: StringEnum(KEY_ROLES),
        account_id: Type.String(),
      },
      closed,
    ),
    csrf_token: Type.String({ description: 'Send it in `x-csrf-token` with every POST, PUT, PATCH and DELETE made with the session (G362)' }),
    expires_at: Type.Integer({ description: 'When the session ends, Unix seconds' }),
    paths: Type.Object(
      {
        power_prefix: Type.String({ description: 'MEDIAGATE_POWER_PREFIX: the path prefix of the motion family' }),
        api_prefix: Type.String({ description: 'MEDIAGATE_API_PREFIX: the path prefix of clip and reel Form A' }),
      },
      closed,
    ),
  },
  {
    ...closed,
    title: 'ConsoleSession',
    description: 'A web console session: the key signed in with, the CSRF token of its changes, its expiry and the path prefixes the console needs',
  },
);
export type ConsoleSession = Static<typeof ConsoleSession>;
