import { ConnectionError, MediagateError } from './errors.js';
import { call, type HttpOptions, send } from './http.js';
import { sseData } from './sse.js';
import type { ChatChunk, ChatCompletion, ChatParams, StandardErrorBody } from './types.js';

/**
 * An error event inside an opened chat stream (`data: {"error": {...}}`), e.g. the key was revoked
 * mid-stream: `status` is the stream's (200), `code` and `body.error.type` say what went wrong.
 */
export class StreamError extends MediagateError {
  override name = 'StreamError';

  constructor(status: number, body: StandardErrorBody, requestId: string | null) {
    super(status, body, requestId, null);
    this.message = `the chat stream ended with an error: ${body.error.code}: ${body.error.message}`;
  }
}

export interface ChatRequestOptions {
  signal?: AbortSignal;
}

/** `POST {base_url}/v1/chat/completions`, whole or streamed. */
export class ChatResource {
  constructor(
    private readonly http: HttpOptions,
    private readonly url: () => string,
  ) {}

  /** The whole reply: the envelope `{code: "200", msg, data: {content, usage, model, id, finish_reason}, success}`. */
  create(params: ChatParams, options: ChatRequestOptions = {}): Promise<ChatCompletion> {
    return call<ChatCompletion>(this.http, this.url(), {
      method: 'POST',
      body: { ...params, stream: false },
      ...(options.signal && { signal: options.signal }),
    });
  }

  /**
   * The reply as `chat.completion.chunk` objects, as they arrive. Ends after `data: [DONE]`;
   * throws StreamError for an error event and ConnectionError when the stream ends without [DONE].
   * Leaving the loop early (break, or `signal`) closes the connection.
   */
  async *stream(params: ChatParams, options: ChatRequestOptions = {}): AsyncGenerator<ChatChunk, void, undefined> {
    const { response, guard } = await send(this.http, this.url(), {
      method: 'POST',
      body: { ...params, stream: true },
      headers: { accept: 'text/event-stream' },
      ...(options.signal && { signal: options.signal }),
    });
    guard.stopTimer(); // the timeout covers the opening only: a stream may take long; the signal still ends it
    const requestId = response.headers.get('x-request-id');
    try {
      if (!response.body) throw new ConnectionError('the chat stream has no body');
      for await (const data of sseData(response.body)) {
        if (data === '[DONE]') return;
        const event = JSON.parse(data) as ChatChunk | StandardErrorBody;
        if ('error' in event) throw new StreamError(response.status, event, requestId);
        yield event;
      }
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (err instanceof MediagateError || err instanceof ConnectionError || err instanceof SyntaxError) throw err;
      throw new ConnectionError(`the chat stream broke: ${(err as Error).message}`, { cause: err });
    } finally {
      guard.done();
    }
    throw new ConnectionError('the chat stream ended before data: [DONE]');
  }
}
