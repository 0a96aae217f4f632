/**
 * A local OpenAI-compatible `/v1/chat/completions` server for the upstream provider's tests
 * (node:http on 127.0.0.1, port 0). Each request is recorded; what it answers is set per test with
 * `fake.behave(...)` from the behaviours below.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface BehaviourContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  body: Record<string, unknown>;
}

export type Behaviour = (c: BehaviourContext) => void | Promise<void>;

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests whose connection closed before the reply was finished (the client went away). */
  clientCloses: number;
  behave(b: Behaviour): void;
  /** Resolves at the next early close of a request by the client. */
  nextClientClose(): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeOpenAi(initial: Behaviour = reply({ content: 'Hello there!' })): Promise<FakeOpenAi> {
  let behaviour = initial;
  const closeWaiters: Array<() => void> = [];
  const fake: FakeOpenAi = {
    baseUrl: '',
    requests: [],
    clientCloses: 0,
    behave: (b) => {
      behaviour = b;
    },
    nextClientClose: () => new Promise((resolve) => closeWaiters.push(resolve)),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      /* recorded as {} */
    }
    fake.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    res.on('close', () => {
      if (!res.writableFinished) {
        fake.clientCloses++;
        for (const w of closeWaiters.splice(0)) w();
      }
    });
    // GET /v1/models: the models the key may use (a channel's probe, G323)
    if (req.method === 'GET' && req.url === '/v1/models') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' }] }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    try {
      await behaviour({ req, res, body });
    } catch {
      res.destroy();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

export interface ReplyOptions {
  content: string;
  /** How the stream splits the content (default: words). */
  pieces?: string[];
  finishReason?: string | null;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  /** Delay before the headers (ms). */
  delayMs?: number;
  /** Delay between stream chunks (ms). */
  chunkDelayMs?: number;
  /** Send the stream as raw bytes re-split into pieces of this size (tests the parser), CRLF if `crlf`. */
  splitBytes?: number;
  crlf?: boolean;
  /** Heartbeat comments between chunks. */
  comments?: boolean;
  /** Omit the `data: [DONE]` line. */
  noDone?: boolean;
}

function chunkObject(delta: Record<string, unknown>, finish: string | null, model: unknown): Record<string, unknown> {
  return { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** The SSE event texts of a streamed reply (role chunk, content chunks, finish chunk, usage chunk, [DONE]). */
export function streamEvents(o: ReplyOptions, model: unknown, includeUsage: boolean): string[] {
  const pieces = o.pieces ?? o.content.split(/(?<= )/);
  const events = [JSON.stringify(chunkObject({ role: 'assistant', content: '' }, null, model))];
  for (const p of pieces) events.push(JSON.stringify(chunkObject({ content: p }, null, model)));
  events.push(JSON.stringify(chunkObject({}, o.finishReason === undefined ? 'stop' : o.finishReason, model)));
  if (includeUsage && o.usage !== null) {
    events.push(
      JSON.stringify({
        id: 'chatcmpl-fake',
        object: 'chat.completion.chunk',
        created: 1,
        model,
        choices: [],
        usage: o.usage ?? { prompt_tokens: 11, completion_tokens: pieces.length, total_tokens: 11 + pieces.length },
      }),
    );
  }
  if (!o.noDone) events.push('[DONE]');
  return events;
}

/** A successful reply, JSON or SSE according to the request's `stream`. */
export function reply(o: ReplyOptions): Behaviour {
  return async ({ res, body }) => {
    if (o.delayMs) await sleep(o.delayMs);
    if (body.stream !== true) {
      const json: Record<string, unknown> = {
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created: 1,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: o.content }, finish_reason: o.finishReason === undefined ? 'stop' : o.finishReason }],
      };
      if (o.usage !== null) json.usage = o.usage ?? { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      return;
    }
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const nl = o.crlf ? '\r\n' : '\n';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const texts = streamEvents(o, body.model, includeUsage).map((e) => `${o.comments ? `: keep-alive${nl}` : ''}data: ${e}${nl}${nl}`);
    if (o.splitBytes) {
      const all = Buffer.from(texts.join(''), 'utf8');
      for (let i = 0; i < all.length; i += o.splitBytes) {
        res.write(all.subarray(i, i + o.splitBytes));
        await sleep(o.chunkDelayMs ?? 1);
      }
    } else {
      for (const t of texts) {
        res.write(t);
        if (o.chunkDelayMs) await sleep(o.chunkDelayMs);
      }
    }
    res.end();
  };
}

/** Raw SSE text exactly as given. */
export function rawStream(text: string): Behaviour {
  return ({ res }) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(text);
  };
}

/** An HTTP error with a JSON (or text) body. */
export function errorReply(status: number, body: unknown, headers: Record<string, string> = {}): Behaviour {
  return ({ res }) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers }).end(text);
  };
}

/** 200 with a body that is not JSON. */
export function malformedJson(): Behaviour {
  return ({ res }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "chatcmpl-x", "choices": [');
  };
}

/** Never answers (until the client goes away). */
export function hang(): Behaviour {
  return () => new Promise<void>(() => undefined);
}

/** Streams `chunks` content chunks (10 ms apart), then destroys the socket. */
export function breakAfter(chunks: number): Behaviour {
  return async ({ res, body }) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < chunks; i++) {
      res.write(`data: ${JSON.stringify(chunkObject({ content: `part${i} ` }, null, body.model))}\n\n`);
      await sleep(10);
    }
    res.socket?.destroy();
  };
}

/** Streams `chunks` content chunks, then an in-stream `data: {"error": ...}` (and ends the response). */
export function errorEventAfter(chunks: number, message = 'The server had an error while processing your request.'): Behaviour {
  return async ({ res, body }) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < chunks; i++) res.write(`data: ${JSON.stringify(chunkObject({ content: `part${i} ` }, null, body.model))}\n\n`);
    await sleep(5);
    res.end(`data: ${JSON.stringify({ error: { message, type: 'server_error', code: null } })}\n\n`);
  };
}

/** Streams `chunks` content chunks, then stays silent (never ends). */
export function stallAfter(chunks: number): Behaviour {
  return async ({ res, body }) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < chunks; i++) res.write(`data: ${JSON.stringify(chunkObject({ content: `part${i} ` }, null, body.model))}\n\n`);
    await new Promise<void>(() => undefined);
  };
}

/** Streams content chunks forever, `everyMs` apart (for abort tests). */
export function endless(everyMs = 10): Behaviour {
  return async ({ res, body }) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; !res.destroyed; i++) {
      res.write(`data: ${JSON.stringify(chunkObject({ content: `tok${i} ` }, null, body.model))}\n\n`);
      await sleep(everyMs);
    }
  };
}
