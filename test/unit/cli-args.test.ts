/**
 * The CLI's own option parsing (src/main/cli-args.ts): a mistake is a UsageError (stderr, exit 2);
 * an unknown option is named with the options the command takes (G485), not Node's advice about
 * `--` and positionals that start with a dash.
 */
import { describe, expect, it } from 'vitest';
import { parse, UsageError } from '../../src/main/cli-args.js';

const OPTIONS = { name: { type: 'string' }, models: { type: 'string' }, json: { type: 'boolean' } } as const;

describe('cli options', () => {
  it('parses what the command takes', () => {
    const { values, positionals } = parse(['key_1', '--name', 'a', '--json'], OPTIONS, 1);
    expect(values).toEqual({ name: 'a', json: true });
    expect(positionals).toEqual(['key_1']);
  });

  it('an unknown option names itself and the options the command takes', () => {
    const run = (): unknown => parse(['key_1', '--role', 'admin'], OPTIONS, 1);
    expect(run).toThrow(UsageError);
    expect(run).toThrow('unknown option --role; this command takes --name, --models, --json (--help for its usage)');
    expect(() => parse(['-x'], {}, 0)).toThrow('unknown option -x; this command takes no options (--help for its usage)');
  });

  it("other mistakes keep Node's words: a missing value, a positional too many", () => {
    expect(() => parse(['--name'], OPTIONS, 0)).toThrow(/--name.*argument missing/);
    expect(() => parse(['a', 'b'], OPTIONS, 1)).toThrow('unexpected argument "b"');
  });
});
