import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, Mediagate, NotFoundError, type FetchLike } from '../../../packages/client/src/index.js';
import { image } from '../../helpers/media-fixtures.js';
import { listeningGateway, type ListeningGateway } from '../../helpers/listening-gateway.js';

// The SDK's uploads and the account (G457): `assets` and `account` over real HTTP to a listening
// gateway, which has no worker (nothing here needs a task to run).
let g: ListeningGateway;
let client: Mediagate;
const asked: string[] = [];
const recording: FetchLike = (url, init) => {
  asked.push(`${init.method} ${url}`);
  return fetch(url, init);
};
beforeAll(async () => {
  g = await listeningGateway({ workers: false });
  client = new Mediagate({ baseUrl: g.origin, apiKey: g.key, fetch: recording });
});
afterAll(async () => {
  await g?.close();
});

describe('assets', () => {
  it('upload (multipart field file), get, use as assetId:// in a create, delete; each at its path', async () => {
    const png = await image(480, 320);
    const asset = await client.assets.upload(new Blob([png], { type: 'image/png' }), { filename: 'fox.png' });
    expect(asset).toMatchObject({
      object: 'asset',
      status: 'approved',
      reason: null,
      kind: 'image',
      format: 'png',
      width: 480,
      height: 320,
      bytes: png.length,
    });
    expect(asked.at(-1)).toBe(`POST ${g.origin}/v2/model-center/assets`);
    expect(await client.assets.get(asset.id)).toEqual(asset);
    expect(asked.at(-1)).toBe(`GET ${g.origin}/v2/model-center/assets/${asset.id}`);
    const task = await client.modelCenter.create({ model: 'imagegen-5.0', prompt: 'a fox', image_urls: [`assetId://${asset.id}`] });
    expect(task.status).toBe('queued');
    expect(await client.assets.delete(asset.id)).toEqual({ id: asset.id, object: 'asset', deleted: true });
    expect(asked.at(-1)).toBe(`DELETE ${g.origin}/v2/model-center/assets/${asset.id}`);
    await expect(client.assets.get(asset.id)).rejects.toMatchObject({ constructor: NotFoundError, code: 'asset_id_not_found' });
  });

  it('a file review rejects is answered with its reason, not thrown; a File keeps its own name', async () => {
    const rejected = await client.assets.upload(new File(['plain text, not a medium'], 'notes.txt', { type: 'text/plain' }));
    expect(rejected).toMatchObject({ object: 'asset', status: 'rejected', reason: expect.stringContaining('not an image') });
  });

  it('fromUrl sends {url}; a URL that is not http(s) is a BadRequestError naming url', async () => {
    const err = await client.assets.fromUrl('ftp://example.com/a.png').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, param: 'url' });
  });
});

describe('account', () => {
  it("answers the key's account with its credits and the period asked for", async () => {
    const account = await client.account.get({ days: 7 });
    expect(asked.at(-1)).toBe(`GET ${g.origin}/v1/account?days=7`);
    expect(account).toMatchObject({ account: { id: expect.stringMatching(/^acct_/) }, usage: expect.any(Array), period: { days: 7 } });
    expect(typeof account.balance).toBe('number');
    expect((await client.account.get()).period.days).toBe(30);
  });
});
