/**
 * `GET /v1/tasks` (G216-G218) through the gateway: items exactly as the family query endpoints
 * answer them, filters, cursor pages stable under concurrent submits, isolation between keys,
 * and a 400 naming the parameter for every bad value. Runs on SQLite and (postgres-e2e) on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/keys.js';
import { claimNextTask, completeTask } from '../../src/tasks/states.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const CREATES: Array<[string, Record<string, unknown>]> = [
  ['/v1/pic/images', { model: 'pic-2', prompt: 'a fox', size: '16:9' }],
  ['/clip/videos', { model: 'clip_3_1_fast', prompt: 'a fox', aspect_ratio: '9:16' }],
  ['/reel/videos', { model: 'reel-2', prompt: 'a fox', size: '1280x720', duration: 10 }],
  ['/v1/motion/videos', { model: 'motion_1_5_pro_720p', content: [{ type: 'text', text: 'a fox' }], ratio: '16:9', duration: 5 }],
  ['/v1/videos/videos', { model: 'videos', prompt: 'a fox', duration: 5, ratio: '9:16' }],
  ['/v2/model-center/tasks', { model: 'sd_2.0_fast_discount', prompt: 'a fox', duration: 5, aspect_ratio: '1:1' }],
];

async function create(url: string, payload: Record<string, unknown>, key = h.key): Promise<string> {
  const res = await h.app.inject({ method: 'POST', url, headers: h.auth(key), payload });
  expect(res.statusCode, res.body).toBe(200);
  const json = res.json();
  return (json.id ?? json.data?.projectId ?? json.data?.id ?? json.task_id) as string;
}

const list = async (query: string, key = h.key) => h.app.inject({ method: 'GET', url: `/v1/tasks${query}`, headers: h.auth(key) });

/** Every id the list gives with these filters, following next_cursor to the end. */
async function allIds(filters: string, limit: number, between?: () => Promise<void>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (;;) {
    const res = await list(`?limit=${limit}${filters}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    ids.push(...page.data.map((t: { id: string }) => t.id));
    expect(page.data.length).toBeLessThanOrEqual(limit);
    if (!page.has_more) {
      expect(page.next_cursor).toBeNull();
      return ids;
    }
    cursor = page.next_cursor;
    await between?.();
  }
}

describe('GET /v1/tasks', () => {
  const made: string[] = [];

  beforeAll(async () => {
    for (const [url, payload] of CREATES) made.push(await create(url, payload));
  });

  it('lists each task exactly as its family query endpoint answers it, newest first', async () => {
    const res = await list('');
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(page.data).toHaveLength(CREATES.length);
    for (const item of page.data) {
      const query = await h.app.inject({ method: 'GET', url: `/v1/result/${item.id as string}`, headers: h.auth() });
      expect(item).toEqual(query.json());
    }
    const ids = page.data.map((t: { id: string }) => t.id);
    expect([...ids].sort()).toEqual([...made].sort());
    const created = await Promise.all(ids.map(async (id: string) => (await h.store.tasks.get(id))!));
    for (let i = 1; i < created.length; i++) {
      const [a, b] = [created[i - 1]!, created[i]!];
      expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)).toBe(true);
    }
  });

  it('filters by status (comma-separated), family, model and created_after', async () => {
    const keyId = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!.id;
    const claimed = await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000);
    expect(claimed).toBeDefined();
    expect(await completeTask(h.store.tasks, claimed!, 'w-test', { files: [] }, Date.now() + 3_600_000)).toBeDefined();
    const familyOf = async (id: string) => (await h.store.tasks.get(id))!.family;
    const ids = async (q: string) => (await list(q)).json().data.map((t: { id: string }) => t.id) as string[];
    expect(await ids('?status=completed')).toEqual([claimed!.id]);
    expect((await ids('?status=queued,completed')).sort()).toEqual([...made].sort());
    expect(await ids('?status=failed,cancelled')).toEqual([]);
    const videos = await ids('?family=videos');
    expect(videos).toHaveLength(1);
    expect(await familyOf(videos[0]!)).toBe('videos');
    expect((await ids('?family=clip,model-center')).length).toBe(2);
    expect(await ids('?model=reel-2')).toHaveLength(1);
    const all = await Promise.all(made.map((id) => h.store.tasks.get(id)));
    const newest = Math.max(...all.map((t) => t!.createdAt));
    expect(await ids(`?created_after=${new Date(newest).toISOString()}`)).toEqual([]);
    expect((await ids(`?created_after=${Math.floor(newest / 1000) - 3600}`)).length).toBe(CREATES.length);
    expect(all.every((t) => t!.ownerKeyId === keyId)).toBe(true);
  });

  it("another key's tasks are never listed", async () => {
    const theirs = await create('/v1/pic/images', { model: 'pic', prompt: 'bob' }, h.otherKey);
    const mine = (await list('?limit=100')).json().data.map((t: { id: string }) => t.id);
    expect(mine).not.toContain(theirs);
    expect((await list('', h.otherKey)).json().data.map((t: { id: string }) => t.id)).toEqual([theirs]);
  });

  it('pages chained while other submits land: no task missing or repeated across pages', async () => {
    for (let i = 0; i < 12; i++) await create('/v1/pic/images', { model: 'pic', prompt: `old ${i}` });
    const before = await allIds('', 100);
    let n = 0;
    const submits: Promise<string>[] = [];
    const paged = await allIds('', 3, async () => {
      n++;
      // submits racing the next page's read, of this key and of the other one
      submits.push(
        create('/v1/pic/images', { model: 'pic', prompt: `new ${n}` }),
        create('/v1/pic/images', { model: 'pic', prompt: `new ${n}` }),
        create('/v1/pic/images', { model: 'pic', prompt: `theirs ${n}` }, h.otherKey),
      );
    });
    const landed = await Promise.all(submits);
    expect(landed.filter((id) => paged.includes(id))).toEqual([]);
    expect(n).toBeGreaterThan(4);
    expect(new Set(paged).size).toBe(paged.length);
    expect(paged).toEqual(before); // everything there when paging began, once, in order; later submits sort before page one
  });

  it('answers 400 naming the parameter for every bad value', async () => {
    const page = (await list('?limit=2')).json();
    const cursor = page.next_cursor as string;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const tampered = Buffer.from(JSON.stringify([1, 'x', 'not-the-digest'])).toString('base64url');
    // a cursor rewritten to an id holding NUL (the digest is no secret): PostgreSQL cannot compare it
    const [at, , digest] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [number, string, string];
    const nul = Buffer.from(JSON.stringify([at, 'task_\u0000', digest])).toString('base64url');
    const cases: Array<[string, string]> = [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=ten', 'limit'],
      ['?limit=2.5', 'limit'],
      ['?status=done', 'status'],
      ['?status=queued,,failed', 'status'],
      ['?family=image', 'family'],
      ['?created_after=yesterday', 'created_after'],
      ['?created_after=2026-01-01', 'created_after'],
      ['?created_after=-5', 'created_after'],
      // dates that do not exist (Date.parse rolls them over into the next month or day)
      ['?created_after=2026-02-30T00:00:00Z', 'created_after'],
      ['?created_after=2026-02-29T00:00:00Z', 'created_after'],
      ['?created_after=2026-04-31T00:00:00Z', 'created_after'],
      ['?created_after=2026-01-01T24:00:00Z', 'created_after'],
      ['?created_after=2026-01-01T12:60:00Z', 'created_after'],
      ['?created_after=2026-01-01T12:00:00%2B24:00', 'created_after'],
      ['?cursor=%25%25', 'cursor'],
      ['?cursor=abc', 'cursor'],
      [`?cursor=${tampered}`, 'cursor'],
      [`?cursor=${cursor}&status=queued`, 'cursor'],
      ['?colour=red', 'colour'],
      ['?model=', 'model'],
      ['?limit=1&limit=2', 'limit'],
      ['?model=a%00b', 'model'],
      [`?limit=2&cursor=${nul}`, 'cursor'],
    ];
    for (const [query, param] of cases) {
      const res = await list(query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error, query).toMatchObject({ code: 'invalid_request', param });
    }
    expect((await list(`?limit=2&cursor=${cursor}`)).statusCode).toBe(200);
    // the real ones, a leap day and a zone among them
    for (const date of ['2028-02-29T00:00:00Z', '2026-12-31T23:59:59.999Z', '2026-06-30T12:00:00%2B05:30', '2026-01-01T00:00-08:00']) {
      expect((await list(`?created_after=${date}`)).statusCode, date).toBe(200);
    }
    expect((await h.app.inject({ method: 'GET', url: '/v1/tasks' })).statusCode).toBe(401);
  });

  it('the OpenAPI document lists both endpoints, the list with its reply schema', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/tasks'].get.responses['200'].content['application/json'].schema.properties).toHaveProperty('next_cursor');
    expect(doc.paths['/v1/tasks/{id}/events']).toHaveProperty('get');
  });
});
