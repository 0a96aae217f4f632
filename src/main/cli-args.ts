import { parseArgs } from 'node:util';

/** A mistake on the command line: the message goes to stderr, the exit code is 2. */
export class UsageError extends Error {}

/** `parseArgs` with the command's own options; unknown options and missing values are usage errors. */
export function parse<const O extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>>(args: string[], options: O, positionals: number) {
  const parsed = (() => {
    try {
      return parseArgs({ args, options, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError(usageOf(err as Error & { code?: string }, options));
    }
  })();
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`);
  return parsed;
}

/**
 * Node's parse error in the command's terms: an unknown option is named with the options the
 * command takes (Node's own message explains `--` for a positional that starts with a dash,
 * which is never what was meant here; G485).
 */
function usageOf(err: Error & { code?: string }, options: Record<string, unknown>): string {
  const unknown = err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']+)'/.exec(err.message)?.[1] : undefined;
  if (!unknown) return err.message;
  const known = Object.keys(options).map((o) => `--${o}`);
  return `unknown option ${unknown}; this command takes ${known.length ? known.join(', ') : 'no options'} (--help for its usage)`;
}

/**
 * Whether the command line asks for the usage (`--help` or `-h` before any `--`): then the usage is
 * the answer, on stdout with exit 0, where a mistake gets it on stderr with exit 2 (G458).
 */
export function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/**
 * What a gateway URL carries that no request may, for a usage error that never echoes the URL: a
 * user name or password (`https://user:pass@host`, G459), a query string or fragment (`?key=...`,
 * G466). The SDK's own rule, which its constructors apply.
 */
export { gatewayUrlExtras as urlExtras } from '../../packages/client/dist/http.js';
