/**
 * The chat provider contract (the `chat` family, docs/reference/api/chat.md): one normalised request in, a
 * completion or a stream of deltas out. Providers translate and call; the route shapes envelopes
 * and SSE, records usage and maps errors (AppError codes from src/errors.ts).
 */
import type { ProbeResult } from '../providers/probe-result.js';
import type { Logger } from 'pino';

export type ChatRole = 'system' | 'user' | 'assistant';

export type ChatContentPart =
  | { type: 'text'; text: string }
  /** Images and videos alike arrive as `image_url` (G38). */
  | { type: 'image_url'; image_url: { url: string } };

export interface ChatMessage {
  role: ChatRole;
  content: string | ChatContentPart[];
}

/** A validated chat request, as every provider receives it. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  top_p?: number;
  max_completion_tokens?: number;
  /** Normalised to a list (0-4 sequences). */
  stop: string[];
  presence_penalty?: number;
  frequency_penalty?: number;
}

export type FinishReason = 'stop' | 'length';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletion {
  content: string;
  finishReason: FinishReason;
  usage: ChatUsage;
}

/**
 * What a streaming provider yields. `open` (optional, first): the model accepted the request and
 * will stream, so the caller's stream can open (status line and role chunk) before the first
 * token; anything thrown before it is answered as an HTTP error instead.
 */
export type ChatStreamEvent = { type: 'open' } | { type: 'delta'; content: string } | { type: 'done'; finishReason: FinishReason; usage: ChatUsage };

export interface ChatContext {
  /** Aborted when the client goes away or the request times out: stop the upstream call. */
  signal: AbortSignal;
  log: Logger;
  /** The model's name at this provider (the route's `model`), else the caller's. */
  upstreamModel: string;
}

/**
 * Chat completions at a provider (the `chat` family; G404: the one chat contract, a media
 * provider's `chat` and a chat-only upstream alike): the whole reply, or its deltas as they come.
 * The model's name at the provider is `ctx.upstreamModel`. A failure that is the channel's (see
 * ChannelError) before anything was produced lets the gateway try the next candidate.
 */
export interface ChatApi {
  /** The whole reply at once. */
  complete(request: ChatRequest, ctx: ChatContext): Promise<ChatCompletion>;
  /** Deltas as they come, then exactly one `done` event. A failure mid-way throws from the iterator. */
  stream(request: ChatRequest, ctx: ChatContext): AsyncIterable<ChatStreamEvent>;
}

/** A chat-only upstream: the chat contract with its id and what a provider has at start and shutdown (registry.ts chatOnlyProvider makes it a provider). */
export interface ChatProvider extends ChatApi {
  id: string;
  /** Releases pooled connections at shutdown. */
  close?(): Promise<void>;
  /** A cheap check that the upstream answers with the configured key (G323), as Provider.probe. */
  probe?(signal: AbortSignal): Promise<ProbeResult>;
}
