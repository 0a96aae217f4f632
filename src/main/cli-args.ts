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

/** Whether a URL carries a user name or password (`https://user:pass@host`): never sent, never echoed (G459). */
export function hasCredentials(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}
