// Baseline for bench/chat.js: the least any gateway can add. A bare Node HTTP server that relays
// POST /v1/chat/completions to BENCH_RELAY_UPSTREAM (up to the API version) over a keep-alive undici
// Agent and copies the upstream's status, content type and body bytes back as they arrive: no auth,
// no validation, no parsing, no re-encoding. The difference between it and going direct is the cost
// of one more process and two more loopback hops on this machine; the difference between mediagate
// and it is mediagate's own work. Prints `{"port":N}` when listening.
import http from 'node:http';
import { Agent, request } from 'undici';

const upstream = process.env.BENCH_RELAY_UPSTREAM;
if (!upstream) throw new Error('BENCH_RELAY_UPSTREAM is required');
const agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });

const server = http.createServer(async (req, res) => {
  const parts = [];
  for await (const c of req) parts.push(c);
  try {
    const up = await request(`${upstream}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
      body: Buffer.concat(parts),
      dispatcher: agent,
    });
    res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
    for await (const chunk of up.body) res.write(chunk);
    res.end();
  } catch {
    res.destroy();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`bare-relay: not listening on TCP (${address})`);
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT'])
  process.on(sig, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
