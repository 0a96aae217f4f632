/**
 * Credits of chat requests (G206): a hold of the estimate (prompt tokens plus
 * `max_completion_tokens`, or MEDIAGATE_CHAT_HOLD_TOKENS) before the upstream is called, settled
 * once when the request ends: to the tokens used (a client abort and a mid-stream failure
 * included: what was generated is charged), nothing for a request that produced nothing; the rest
 * of the hold goes back. A free chat model (no chat price configured) holds nothing.
 */
import type { Logger } from 'pino';
import type { PriceBook } from '../credits/prices.js';
import { insufficientCredits } from '../credits/refusal.js';
import type { CreditStore } from '../store/types.js';
import { countPromptTokens } from './tokens.js';
import type { ChatRequest, ChatUsage } from './types.js';

export interface ChatCreditsOptions {
  store: CreditStore;
  prices: PriceBook;
  /** Refuse (402) a request its account cannot cover. */
  enforce: boolean;
  /** Completion tokens held when the request sets no `max_completion_tokens`. */
  holdTokens: number;
}

/** Settles one request's hold: at most once; `usage` undefined means nothing was generated. */
export type ChatSettle = (usage: ChatUsage | undefined) => void;

const NOTHING_TO_SETTLE: ChatSettle = () => undefined;

export class ChatCredits {
  constructor(private readonly options: ChatCreditsOptions) {}

  /**
   * Holds the request's estimate on the account; throws the 402 when enforcement is on and the
   * account cannot cover it. The settle function it returns moves the money when the call ends.
   */
  async hold(accountId: string, keyId: string, requestId: string, request: ChatRequest, log: Logger): Promise<ChatSettle> {
    const { store, prices, enforce, holdTokens } = this.options;
    const price = prices.chatPrice(request.model);
    if (price.promptMicroPer1k === 0 && price.completionMicroPer1k === 0) return NOTHING_TO_SETTLE;
    const promptTokens = await countPromptTokens(request);
    const amountMicro = prices.chatCharge(request.model, promptTokens, request.max_completion_tokens ?? holdTokens);
    const held = await store.holdRequest({ accountId, keyId, requestId, model: request.model, amountMicro, createdAt: Date.now() }, enforce);
    if ('refused' in held) throw insufficientCredits(amountMicro, held);
    let settled = false;
    return (usage) => {
      if (settled) return;
      settled = true;
      const charge = usage ? prices.chatCharge(request.model, usage.prompt_tokens, usage.completion_tokens) : 0;
      store
        .settleRequest(requestId, charge, Date.now())
        .catch((err: unknown) =>
          log.error({ err, chatId: requestId }, 'could not settle the credits of a chat request; `mediagate credits reconcile` counts its hold as open'),
        );
    };
  }
}
