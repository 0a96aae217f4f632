/**
 * Credits are kept as whole micro-credits (1 credit = 1,000,000) wherever money is stored or
 * added up (G200): exact integers, never floats. Replies show credits (`amount`, `/v1/account`).
 */
export const MICRO_PER_CREDIT = 1_000_000;

/** Credits as micro-credits, rounded to the nearest (prices have at most 6 decimals). */
export const toMicro = (credits: number): number => Math.round(credits * MICRO_PER_CREDIT);

/** Micro-credits as credits (exact for every amount below 2^53 micro-credits). */
export const toCredits = (micro: number): number => micro / MICRO_PER_CREDIT;

/**
 * A credit amount as a person writes it (`12`, `-3.5`, `0.000001`): at most 9 whole digits and 6
 * decimals, so that it and sums of many of them stay exact integers of micro-credits (below 2^53,
 * about 9 billion credits); undefined when it is not one.
 */
export function parseCredits(text: string): number | undefined {
  if (!/^-?(0|[1-9][0-9]{0,8})(\.[0-9]{1,6})?$/.test(text)) return undefined;
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const micro = Number(whole) * MICRO_PER_CREDIT + Number(fraction.padEnd(6, '0'));
  return text.startsWith('-') ? -micro : micro;
}
