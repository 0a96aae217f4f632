/**
 * Prices in force (G202): the catalog's (the contract's amounts) unless the operator's prices
 * file (`MEDIAGATE_PRICES`) overrides a model; chat per 1,000 prompt and completion tokens. What a
 * task holds is computed here at submit and stored with it (`TaskCharge`).
 */
import { Type, type Static } from '../typebox.js';
import { findModel } from '../contract/catalog.js';
import type { SubmitPlan } from '../contract/submit-plan.js';
import { ConfigError } from '../config-error.js';
import { readConfigJson } from '../config-file.js';
import type { TaskCharge } from '../store/types.js';
import { toMicro } from './money.js';

const Credits = Type.Number({ minimum: 0, maximum: 1_000_000, description: 'a number of credits from 0 to 1000000' });
const ChatPrice = Type.Object(
  {
    prompt: { ...Credits, description: 'credits per 1,000 prompt tokens (0 to 1000000)' },
    completion: { ...Credits, description: 'credits per 1,000 completion tokens (0 to 1000000)' },
  },
  { additionalProperties: false },
);

export const PricesFileSchema = Type.Object(
  {
    models: Type.Optional(
      Type.Record(Type.String(), Credits, { description: "an object: model id -> credits per the model's unit (task, request or second)" }),
    ),
    chat: Type.Optional(Type.Record(Type.String(), ChatPrice, { description: 'an object: chat model id (or "*" for every other) -> {prompt, completion}' })),
  },
  { additionalProperties: false },
);

export type PricesFile = Static<typeof PricesFileSchema>;

export interface ChatPrice {
  promptMicroPer1k: number;
  completionMicroPer1k: number;
}

/** The prices in force. */
export class PriceBook {
  private readonly models: Map<string, number>;
  private readonly chat: Map<string, ChatPrice>;

  constructor(file: PricesFile = {}) {
    this.models = new Map(Object.entries(file.models ?? {}));
    this.chat = new Map(
      Object.entries(file.chat ?? {}).map(([model, p]) => [model, { promptMicroPer1k: toMicro(p.prompt), completionMicroPer1k: toMicro(p.completion) }]),
    );
  }

  /**
   * What a task holds: its amount (the catalog's price, per-second models for the requested
   * duration, tiers applied), scaled by the operator's price where one is set. Per-second models
   * also keep the price of one second, to settle to the length actually produced.
   */
  taskCharge(plan: SubmitPlan, accountId: string): TaskCharge {
    const entry = findModel(plan.model);
    const override = this.models.get(plan.model);
    const credits = entry && override !== undefined && entry.price.credits > 0 ? plan.amount * (override / entry.price.credits) : plan.amount;
    const holdMicro = toMicro(credits);
    const seconds = plan.output.kind === 'video' ? plan.output.durationSec : 0;
    const perSecondMicro = entry?.price.unit === 'second' && seconds > 0 ? Math.ceil(holdMicro / seconds) : null;
    return { accountId, holdMicro, perSecondMicro };
  }

  /** A chat model's prices per 1,000 tokens: its own, else `*`'s, else free. */
  chatPrice(model: string): ChatPrice {
    return this.chat.get(model) ?? this.chat.get('*') ?? { promptMicroPer1k: 0, completionMicroPer1k: 0 };
  }

  /** The charge for these tokens, rounded up to a whole micro-credit. */
  chatCharge(model: string, promptTokens: number, completionTokens: number): number {
    const p = this.chatPrice(model);
    return Math.ceil((promptTokens * p.promptMicroPer1k + completionTokens * p.completionMicroPer1k) / 1000);
  }
}

/** A per-second task's charge for `actualSeconds` of output: never above its hold. */
export function perSecondCharge(charge: TaskCharge, actualSeconds: number): number {
  if (charge.perSecondMicro === null || !(actualSeconds >= 0)) return charge.holdMicro;
  return Math.min(charge.holdMicro, Math.ceil(charge.perSecondMicro * actualSeconds));
}

/** `MEDIAGATE_PRICES`: the prices file, checked; every model it names must be one the gateway serves. */
export function readPrices(file: string | undefined): PriceBook {
  if (!file) return new PriceBook();
  const prices = readConfigJson('MEDIAGATE_PRICES', file, PricesFileSchema);
  for (const model of Object.keys(prices.models ?? {})) {
    if (!findModel(model)) throw new ConfigError('MEDIAGATE_PRICES', `models.${model} is not a model this gateway serves (chat models go under "chat")`);
  }
  return new PriceBook(prices);
}
