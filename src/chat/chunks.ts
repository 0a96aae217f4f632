/**
 * The `chat.completion.chunk` events of one streamed reply (D22, G40), serialized.
 * A reply sends one chunk per piece of text, so the parts every chunk shares (id, created, model)
 * are serialized once per reply and a content chunk is two string joins around its JSON text.
 */
import type { ChatUsage, FinishReason } from './types.js';

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{ index: 0; delta: { role?: 'assistant'; content?: string }; finish_reason: FinishReason | null }>;
  usage?: ChatUsage;
}

export class ChatChunks {
  private readonly deltaHead: string;
  private static readonly deltaTail = '},"finish_reason":null}]}';

  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
  ) {
    this.deltaHead = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":{"content":`;
  }

  /** A chunk carrying `content` (the same text JSON.stringify gives for {@link chunk}). */
  content(content: string): string {
    return this.deltaHead + JSON.stringify(content) + ChatChunks.deltaTail;
  }

  /** The first chunk: the assistant role and empty content. */
  role(): string {
    return JSON.stringify(this.chunk({ role: 'assistant', content: '' }, null));
  }

  /** The chunk that ends the choice with its finish reason. */
  finish(reason: FinishReason): string {
    return JSON.stringify(this.chunk({}, reason));
  }

  /** The usage chunk after the finish (empty `choices`, as OpenAI sends with include_usage). */
  usage(usage: ChatUsage): string {
    return JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage } satisfies ChatChunk);
  }

  chunk(delta: ChatChunk['choices'][0]['delta'], finishReason: FinishReason | null): ChatChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
  }
}
