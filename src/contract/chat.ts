import { Type, type Static } from '../typebox.js';
import type { ChatContentPart, ChatMessage, ChatRequest } from '../chat/types.js';
import { invalidField } from '../errors.js';
import { MediaUrl, StringEnum } from './schema-helpers.js';

/** The six chat models (docs/reference/api/chat.md#request). */
export const CHAT_MODELS = [
  'chat-3-flash-preview',
  'chat-2.5-flash-lite',
  'chat-2.5-flash',
  'chat-3.1-pro-preview',
  'chat-3-pro-preview',
  'chat-2.5-pro',
] as const;
export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;
export const CHAT_PART_TYPES = ['text', 'image_url'] as const;
export const CHAT_MAX_STOP = 4;

/**
 * Context length of every chat model, tokens (G36). Input plus generated
 * tokens are bounded by it: a prompt that fills it is a 400, a reply that would overflow it ends
 * with `finish_reason: "length"`.
 */
export const CHAT_CONTEXT_TOKENS = 1_048_576;

/**
 * A content part. One object schema with a `type` enum (not a union), so a wrong `type` is reported
 * as `messages[1].content[0].type must be one of: text, image_url`; the member each type needs is
 * required by an if/then (`messages[0].content[0].text is required`).
 */
const ContentPart = Type.Unsafe<ChatContentPart>({
  type: 'object',
  description: 'a content part: {type: "text", text} or {type: "image_url", image_url: {url}}',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: [...CHAT_PART_TYPES] },
    text: { type: 'string', maxLength: 1_000_000 },
    image_url: {
      type: 'object',
      required: ['url'],
      properties: { url: MediaUrl('image or video URL (videos also use image_url)', false) },
    },
  },
  allOf: [
    { if: { required: ['type'], properties: { type: { const: 'text' } } }, then: { required: ['text'] } },
    { if: { required: ['type'], properties: { type: { const: 'image_url' } } }, then: { required: ['image_url'] } },
  ],
});

const Message = Type.Object(
  {
    role: StringEnum(CHAT_ROLES, { description: 'system, user or assistant' }),
    // `items`/`minItems` apply to arrays only, so a string passes them: a union without anyOf noise.
    content: Type.Unsafe<string | ChatContentPart[]>({
      type: ['string', 'array'],
      items: ContentPart,
      description: 'a string, or an array of text / image_url parts',
    }),
  },
  { additionalProperties: true },
);

export const ChatCompletionBody = Type.Object(
  {
    model: StringEnum(CHAT_MODELS, { description: 'Chat model' }),
    messages: Type.Array(Message, { minItems: 1, description: 'The conversation so far (at least one message)' }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, description: 'Sampling temperature, 0 to 2' })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Nucleus sampling mass, 0 to 1 (may be sent with temperature: D10)' })),
    stream: Type.Optional(Type.Boolean({ description: 'Send data-only server-sent events; default false' })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1, description: 'Most tokens to generate; default unbounded (context length)' })),
    stop: Type.Optional(
      Type.Unsafe<string | string[] | null>({
        type: ['string', 'array', 'null'],
        items: { type: 'string', minLength: 1 },
        minLength: 1,
        maxItems: CHAT_MAX_STOP,
        description: 'A stop sequence or up to 4 of them',
      }),
    ),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2, description: '-2.0 to 2.0' })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2, description: '-2.0 to 2.0; default 0' })),
  },
  { additionalProperties: true },
);

export type ChatCompletionBody = Static<typeof ChatCompletionBody>;

/** A schema-valid body -> what every provider receives (stop normalised to a list). */
export function toChatRequest(body: ChatCompletionBody): ChatRequest {
  const stop = body.stop === undefined || body.stop === null ? [] : typeof body.stop === 'string' ? [body.stop] : [...body.stop];
  const messages: ChatMessage[] = body.messages.map((m, i) => ({
    role: m.role,
    content: typeof m.content === 'string' ? m.content : m.content.map((part, j) => normalisePart(part, i, j)),
  }));
  return {
    model: body.model,
    messages,
    stop,
    ...(body.temperature !== undefined && { temperature: body.temperature }),
    ...(body.top_p !== undefined && { top_p: body.top_p }),
    ...(body.max_completion_tokens !== undefined && { max_completion_tokens: body.max_completion_tokens }),
    ...(body.presence_penalty !== undefined && { presence_penalty: body.presence_penalty }),
    ...(body.frequency_penalty !== undefined && { frequency_penalty: body.frequency_penalty }),
  };
}

/** Keeps only the fields of the part's type (extra fields such as `detail` are dropped). */
function normalisePart(part: ChatContentPart, i: number, j: number): ChatContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'image_url') return { type: 'image_url', image_url: { url: part.image_url.url } };
  throw invalidField(`messages[${i}].content[${j}].type`, `messages[${i}].content[${j}].type must be one of: ${CHAT_PART_TYPES.join(', ')}`);
}

/** The text of a message (text parts joined by newlines). */
export function messageText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

/** The URLs of a message's image_url parts. */
export function messageMediaUrls(message: ChatMessage): string[] {
  if (typeof message.content === 'string') return [];
  return message.content.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : []));
}

const VIDEO_EXTENSIONS = /\.(mp4|mov|webm)$/i;

/** An `image_url` whose path ends in .mp4/.mov/.webm is a video (G38: videos use image_url too). */
export function isVideoUrl(url: string): boolean {
  try {
    return VIDEO_EXTENSIONS.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/** The non-streaming reply (D21), as the chat service builds it (G240). */
export const ChatCompletionReply = Type.Object(
  {
    code: Type.Literal('200'),
    msg: Type.Literal('成功'),
    data: Type.Object(
      {
        content: Type.String({ description: "The assistant's reply" }),
        usage: Type.Object(
          {
            prompt_tokens: Type.Integer({ minimum: 0 }),
            completion_tokens: Type.Integer({ minimum: 0 }),
            total_tokens: Type.Integer({ minimum: 0 }),
          },
          { additionalProperties: false },
        ),
        model: Type.String(),
        id: Type.String({ description: 'chatcmpl-...' }),
        finish_reason: StringEnum(['stop', 'length']),
      },
      { additionalProperties: false },
    ),
    success: Type.Literal(true),
  },
  { additionalProperties: false, title: 'ChatCompletion' },
);

export type ChatCompletionReply = Static<typeof ChatCompletionReply>;

/** With `stream: true`: server-sent events (G40), documented as text. */
export const ChatCompletionStream = Type.String({
  title: 'ChatCompletionStream',
  description:
    'Server-sent events (D22, G40): `data: {...}` events carrying OpenAI `chat.completion.chunk` objects (the assistant role, then content deltas, a chunk with `finish_reason`, a last chunk with `usage` and empty `choices`), `: ping` comments while waiting, and `data: [DONE]`; a failure after the stream opened ends it with `data: {"error": {...}}` and no [DONE].',
});
