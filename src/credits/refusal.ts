import { AppError } from '../errors.js';
import type { HoldRefusal } from '../store/types.js';
import { toCredits } from './money.js';

/**
 * The 402 of a request that cannot be held (G204, G207): the price and the balance, in credits,
 * or the key's spending cap and what is left of it.
 */
export function insufficientCredits(priceMicro: number, refusal: HoldRefusal): AppError {
  const price = `this request costs ${toCredits(priceMicro)} credits`;
  if (refusal.refused === 'credits') {
    return new AppError(
      'insufficient_credits',
      `Not enough credits: ${price} and the account has ${toCredits(refusal.availableMicro)} available; ask the operator for more`,
    );
  }
  const left = Math.max(0, refusal.capMicro - refusal.usedMicro);
  return new AppError(
    'insufficient_credits',
    `Not enough credits: ${price} and this API key's spending cap of ${toCredits(refusal.capMicro)} credits has ${toCredits(left)} left; ask the operator to raise it`,
  );
}
