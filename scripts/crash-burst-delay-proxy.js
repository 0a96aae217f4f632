// An HTTP proxy in front of the upstream of `scripts/crash-burst.js --relay` that holds every answer
// to a POST (a create) for `delayMs` after the upstream gave it, as a distant provider's create
// takes a while to come back: the upstream has made the task, the relaying gateway has not yet
// saved its reference (G86's window, docs/decisions/upstreams.md). A kill -9 of the relaying gateway then almost
// surely cuts creates the upstream already took, whose repeats must get the same upstream task.
// `onHeld(body)` is called with the create's body as its answer starts to be held (the moment to
// kill the relaying gateway: that create is surely cut). Everything else passes at once. A request the client stops
// sending is cut at the upstream too.
import http from 'node:http';

/**
 * The proxy; `target` (`http://127.0.0.1:<port>` of the upstream) is set once the upstream listens.
 * @param {number} delayMs
 * @returns {Promise<{ origin: string, target: string, onHeld: (body: string) => void, close: () => Promise<void> }>}
 */
export async function startDelayProxy(delayMs) {
  const agent = new http.Agent({ keepAlive: true });
  /** @type {{ origin: string, target: string, onHeld: (body: string) => void, close: () => Promise<void> }} */
  const proxy = { origin: '', target: '', onHeld: () => undefined, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const target = new URL(proxy.target);
    /** @type {Buffer[]} */
    const body = [];
    req.on('data', (chunk) => body.push(chunk));
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      const pass = () => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      };
      if (req.method !== 'POST') {
        pass();
        return;
      }
      setTimeout(pass, delayMs);
      proxy.onHeld(Buffer.concat(body).toString());
    });
    up.on('error', () => res.destroy());
    res.on('error', () => undefined);
    req.on('aborted', () => up.destroy());
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('delay proxy: not listening on TCP');
  proxy.origin = `http://127.0.0.1:${address.port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve(undefined)));
    agent.destroy();
  };
  return proxy;
}
