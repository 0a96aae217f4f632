// A minimal OpenAI-compatible chat upstream for bench/chat.js, run as its own process (a plain-JS
// cousin of test/helpers/fake-openai.ts). Every POST /v1/chat/completions with stream: true gets
// BENCH_CHAT_TOKENS content chunks: the first after BENCH_CHAT_FIRST_MS, then one every
// BENCH_CHAT_PACE_MS; then a finish chunk, a usage chunk (if asked for) and `data: [DONE]`.
// A model name `pace-<ms>` overrides the pace for that request (bench/chat.js maps one chat model
// per pace). Non-stream requests get the whole reply at once. Prints `{"port":N}` when listening.
//
// Timeline: a request whose last message contains `[bench:<id>]` has two instants recorded on the
// machine's monotonic clock (process.hrtime, the same in every process): when its headers arrived
// and just before its first content token was written. `GET /bench/timings` answers them as
// `{"<id>": [arrivedMs, firstTokenMs]}` and forgets them. bench/chat.js subtracts this upstream's
// own wait (timer granularity: +-1 ms) from each time to first token, so what is compared is the
// time spent on the way in and out, not the fake's timer jitter.
import http from 'node:http';

const TOKENS = Number(process.env.BENCH_CHAT_TOKENS ?? 200);
const PACE_MS = Number(process.env.BENCH_CHAT_PACE_MS ?? 2);
const FIRST_MS = Number(process.env.BENCH_CHAT_FIRST_MS ?? 5);

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;
/**
 * What `GET /bench/timings` answers: per mark, when the request arrived and when its first token was written.
 * @typedef {Record<string, [arrivedMs: number, firstTokenMs: number]>} Timings
 */
/** @type {Map<string, [arrivedMs: number, firstTokenMs: number]>} */
const timings = new Map();
const MARK = /\[bench:([\w-]+)\]/;
/**
 * One `data:` event of a streamed completion.
 * @param {unknown} model the request's model, echoed
 * @param {{ role?: string, content?: string }} delta
 * @param {string | null} finish the finish reason
 */
const chunk = (model, delta, finish) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const server = http.createServer(async (req, res) => {
  const arrived = nowMs();
  if (req.method === 'GET' && req.url === '/bench/timings') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Object.fromEntries(timings)));
    timings.clear();
    return;
  }
  const parts = [];
  for await (const c of req) parts.push(c);
  /**
   * The parts of a chat completion request this fake reads.
   * @type {{ model?: unknown, stream?: unknown, messages?: { content?: unknown }[], stream_options?: { include_usage?: unknown } }}
   */
  let body;
  try {
    body = JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch {
    res.writeHead(400).end('{"error":{"message":"bad json"}}');
    return;
  }
  const model = body.model;
  const pace = /^pace-(\d+(?:\.\d+)?)$/.exec(String(model))?.[1];
  const paceMs = pace === undefined ? PACE_MS : Number(pace);
  if (body.stream !== true) {
    const content = Array.from({ length: TOKENS }, (_, i) => `t${i} `).join('');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'chatcmpl-bench',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: TOKENS, total_tokens: 10 + TOKENS },
      }),
    );
    return;
  }
  const last = body.messages?.[body.messages.length - 1]?.content;
  const mark = typeof last === 'string' ? MARK.exec(last)?.[1] : undefined;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk(model, { role: 'assistant', content: '' }, null));
  await sleep(FIRST_MS);
  for (let i = 0; i < TOKENS && !res.destroyed; i++) {
    if (i > 0) await sleep(paceMs);
    if (i === 0 && mark !== undefined) timings.set(mark, [arrived, nowMs()]);
    res.write(chunk(model, { content: `t${i} ` }, null));
  }
  if (res.destroyed) return;
  res.write(chunk(model, {}, 'stop'));
  if (body.stream_options?.include_usage) {
    res.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: 10, completion_tokens: TOKENS, total_tokens: 10 + TOKENS } })}\n\n`,
    );
  }
  res.end('data: [DONE]\n\n');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`fake-openai: not listening on TCP (${address})`);
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
