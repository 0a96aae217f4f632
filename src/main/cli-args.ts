import { parseArgs } from 'node:util';

/** A mistake on the command line: the message goes to stderr, the exit code is 2. */
export class UsageError extends Error {}

/** `parseArgs` with the command's own options; unknown options and missing values are usage errors. */
export function parse<const O extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>>(args: string[], options: O, positionals: number) {
  const parsed = (() => {
    try {
      return parseArgs({ args, options, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  })();
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}"`);
  return parsed;
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
