/**
 * A test gateway (harness.ts) listening on a real port of 127.0.0.1, whose `MEDIAGATE_PUBLIC_URL`
 * is its own origin unless the options name another (a proxy in front of it), so the URLs it signs
 * (results, relayed inputs) reach it. Test-only.
 */
import net from 'node:net';
import { createHarness, type Harness, type HarnessOptions } from './harness.js';

export interface ListeningGateway extends Harness {
  /** `http://127.0.0.1:<port>` */
  origin: string;
}

/** A port free at this moment (the OS picks it; it may be taken again before it is used: callers retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function listeningGateway(options: HarnessOptions = {}): Promise<ListeningGateway> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const h = await createHarness({ ...options, env: { MEDIAGATE_PUBLIC_URL: origin, ...options.env } });
    try {
      await h.app.listen({ port, host: '127.0.0.1' });
      return Object.assign(h, { origin });
    } catch (err) {
      await h.close();
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw err;
    }
  }
}
