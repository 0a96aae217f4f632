/**
 * undici (~95 modules), loaded the first time the gateway makes an HTTP call of its own (G296): an
 * upstream's connection pool, a webhook, a caller's media URL. A gateway that only answers (the
 * sandbox, the default) never loads it. undici is CommonJS, so the first use requires it at once,
 * also from constructors; everything else imports its types only.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

export function undici(): typeof Undici {
  loaded ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return loaded;
}
