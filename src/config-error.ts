/** Settings come from the environment (a plain map, so tests pass their own). */
export type Env = Record<string, string | undefined>;

/** A setting that stops the start: the message names the setting and the rule it broke. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}
