import { Type, type Static } from '@sinclair/typebox';
import { closed } from './admin-common.js';
import { KEY_ROLES } from './admin-keys.js';
import { StringEnum } from './schema-helpers.js';

/**
 * The web console's sign-in (G361): the body exchanging an API key for a session cookie and the
 * session it answers. The console (console/) imports these types, so a change here breaks its build.
 */
export const CONSOLE_TAG = 'console';

export const SignInBody = Type.Object({
  api_key: Type.String({ minLength: 1, maxLength: 256, description: 'The API key to sign in with; it is not kept anywhere, only its session' }),
}, closed);
export type SignInBody = Static<typeof SignInBody>;

export const ConsoleSession = Type.Object({
  object: Type.Literal('console_session'),
  key: Type.Object({
    id: Type.String(),
    name: Type.String(),
    role: StringEnum(KEY_ROLES),
    account_id: Type.String(),
  }, closed),
  csrf_token: Type.String({ description: 'Send it in `x-csrf-token` with every POST, PUT, PATCH and DELETE made with the session (G362)' }),
  expires_at: Type.Integer({ description: 'When the session ends, Unix seconds' }),
  paths: Type.Object({
    power_prefix: Type.String({ description: 'MEDIAGATE_POWER_PREFIX: the path prefix of the motion family' }),
    api_prefix: Type.String({ description: 'MEDIAGATE_API_PREFIX: the path prefix of clip and reel Form A' }),
  }, closed),
}, closed);
export type ConsoleSession = Static<typeof ConsoleSession>;
