import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { familyRequestOf } from '../contract/family-request.js';
import type { SubmitPlan } from '../contract/submit-plan.js';
import { mediaRefs } from '../contract/media-refs.js';
import { configError, configFiles } from '../../test/helpers/config-files.js';
import { parseCredits } from './money.js';
import { perSecondCharge, PriceBook } from './prices.js';

const files = configFiles('mediagate-prices-');

const plan = (model: string, amount: number, durationSec?: number): SubmitPlan => ({
  ...familyRequestOf(durationSec === undefined ? 'pic' : 'motion', null, {}),
  model,
  amount,
  media: mediaRefs(),
  output:
    durationSec === undefined
      ? { kind: 'image', width: 8, height: 8, format: 'png' }
      : { kind: 'video', width: 8, height: 8, durationSec, fps: 24, audio: false },
});

describe('prices (G202)', () => {
  it("holds the catalog's amount by default; per-second models keep the price of a second", () => {
    const book = new PriceBook();
    expect(book.taskCharge(plan('pic-pro', 4), 'acct_a')).toEqual({ accountId: 'acct_a', holdMicro: 4_000_000, perSecondMicro: null });
    expect(book.taskCharge(plan('motion_1_5_pro_720p', 10, 5), 'acct_a')).toEqual({ accountId: 'acct_a', holdMicro: 10_000_000, perSecondMicro: 2_000_000 });
    expect(book.chatCharge('chat-2.5-pro', 1000, 1000)).toBe(0); // chat is free without prices
  });

  it('an override replaces the credits per unit, scaling the amount (tiers included); chat per 1,000 tokens, rounded up', () => {
    const book = new PriceBook({
      models: { 'pic-pro': 1.5, motion_1_5_pro_720p: 3 },
      chat: { '*': { prompt: 0.5, completion: 1.5 }, 'chat-2.5-pro': { prompt: 1, completion: 2 } },
    });
    expect(book.taskCharge(plan('pic-pro', 4), 'a').holdMicro).toBe(1_500_000);
    expect(book.taskCharge(plan('motion_1_5_pro_720p', 5, 5), 'a')).toMatchObject({ holdMicro: 7_500_000, perSecondMicro: 1_500_000 }); // flex tier: half
    expect(book.chatCharge('chat-2.5-flash', 1000, 2000)).toBe(3_500_000);
    expect(book.chatCharge('chat-2.5-pro', 3, 0)).toBe(3000);
    expect(book.chatCharge('chat-2.5-pro', 0, 1)).toBe(2000);
  });

  it('a per-second settlement is the seconds produced, never above the hold', () => {
    const charge = { accountId: 'a', holdMicro: 10_000_000, perSecondMicro: 2_000_000 };
    expect(perSecondCharge(charge, 3.2)).toBe(6_400_000);
    expect(perSecondCharge(charge, 7)).toBe(10_000_000);
    expect(perSecondCharge({ ...charge, perSecondMicro: null }, 3)).toBe(10_000_000);
  });

  it('settings: MEDIAGATE_CREDITS, MEDIAGATE_STARTING_CREDITS, MEDIAGATE_PRICES; a bad one stops the start naming it', () => {
    expect(loadConfig({}).credits).toMatchObject({ enforce: false, startingMicro: 0, chatHoldTokens: 4096 });
    expect(loadConfig({ MEDIAGATE_CREDITS: 'on', MEDIAGATE_STARTING_CREDITS: '12.5' }).credits).toMatchObject({ enforce: true, startingMicro: 12_500_000 });
    expect(loadConfig({ MEDIAGATE_PRICES: files.file({ models: { pic: 2 } }) }).credits.prices.taskCharge(plan('pic', 1), 'a').holdMicro).toBe(2_000_000);
    expect(configError(() => loadConfig({ MEDIAGATE_CREDITS: 'yes' })).message).toMatch(/^MEDIAGATE_CREDITS: /);
    expect(configError(() => loadConfig({ MEDIAGATE_STARTING_CREDITS: '-1' })).message).toMatch(/^MEDIAGATE_STARTING_CREDITS: /);
    expect(configError(() => loadConfig({ MEDIAGATE_PRICES: files.file({ models: { 'no-such-model': 1 } }) })).message).toMatch(
      /^MEDIAGATE_PRICES: models\.no-such-model is not a model/,
    );
    expect(configError(() => loadConfig({ MEDIAGATE_PRICES: files.file({ model: {} }) })).message).toMatch(/^MEDIAGATE_PRICES: .*unknown field "model"/);
    expect(configError(() => loadConfig({ MEDIAGATE_PRICES: files.file({ chat: { '*': { prompt: -1, completion: 1 } } }) })).message).toMatch(
      /^MEDIAGATE_PRICES: chat\.\*\.prompt must be credits per 1,000 prompt tokens/,
    );
  });

  it('credit amounts as written: up to 6 decimals, exact', () => {
    expect(parseCredits('0.000001')).toBe(1);
    expect(parseCredits('-3.5')).toBe(-3_500_000);
    expect(parseCredits('100')).toBe(100_000_000);
    expect(parseCredits('999999999.999999')).toBe(999_999_999_999_999);
    for (const bad of ['1.0000001', 'abc', '', '1e3', '01', '.5', '1000000000', '123456789012']) expect(parseCredits(bad), bad).toBeUndefined();
  });
});
