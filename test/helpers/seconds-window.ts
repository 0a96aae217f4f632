import { expect } from 'vitest';

/**
 * A window of Unix seconds opened now, for a timestamp the gateway sets (`created`, a webhook's
 * time): it lies between the second the window was opened in and the second it is checked in,
 * however slow the machine is in between. Open it before the call that sets the timestamp.
 */
export interface SecondsWindow {
  /** The whole second the window was opened in. */
  readonly from: number;
}

export function openSecondsWindow(): SecondsWindow {
  return { from: Math.floor(Date.now() / 1000) };
}

/** `seconds` is a whole number of Unix seconds within `window` (up to the second this is asked in). */
export function expectInWindow(seconds: number, window: SecondsWindow): void {
  const until = Math.ceil(Date.now() / 1000);
  expect(Number.isInteger(seconds), `${seconds} is whole seconds`).toBe(true);
  expect(seconds, `${seconds} is at or after ${window.from}`).toBeGreaterThanOrEqual(window.from);
  expect(seconds, `${seconds} is at or before ${until}`).toBeLessThanOrEqual(until);
}
