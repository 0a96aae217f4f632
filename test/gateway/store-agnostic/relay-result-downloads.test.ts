/**
 * Result downloads at a relay (G96): a relaying gateway that fetches only public
 * addresses still downloads results from its configured upstream on a private address, and sends
 * no credentials with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRelaying, startRelayPair, type RelayPair } from '../../helpers/relay-pair.js';

describe("result downloads from the relay's own upstream", () => {
  let p: RelayPair;
  // the relaying gateway fetches only public addresses, except at its configured upstream
  beforeAll(async () => {
    p = await startRelayPair({ relaying: { env: { MEDIAGATE_ALLOW_PRIVATE_URLS: '0' } } });
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  it("are allowed on a private address when it is the relay's configured origin, with no credentials sent", async () => {
    const created = await callRelaying(p, 'POST', '/v1/pic/images', { model: 'pic', prompt: 'private upstream' });
    const task = await p.relaying.waitForTask(created.json.id as string, undefined, 20_000);
    expect(task.status, task.error ?? '').toBe('completed');
    const downloads = p.proxy.requests.filter((r) => r.method === 'GET' && r.url.startsWith('/files/'));
    expect(downloads).toHaveLength(1);
    expect(downloads[0]!.headers.authorization).toBeUndefined();
    expect(task.result!.sourceUrls![0]!.startsWith(`${p.proxy.url}/files/`)).toBe(true);
  });
});
