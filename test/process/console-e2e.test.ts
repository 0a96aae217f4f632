/**
 * The web console end to end (issue 27): Debian's chromium, driven by playwright-core, against a
 * gateway listening on a free port with the sandbox at `fast` timing (a video takes about two
 * seconds, in steps, so its progress is seen before it completes) and chat streaming at 40 tokens
 * a second. One browser for the whole file. Screenshots of every page at 375 px and 1440 px go to
 * test-results/console/ (gitignored).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY } from '../helpers/admin.js';
import { CHROMIUM, CONSOLE_DIR, collectErrors, ensureConsoleBuilt, launchBrowser, SCREENSHOTS, seriousViolations } from '../helpers/console-browser.js';
import { listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { image } from '../helpers/media-fixtures.js';

// browser globals inside page.evaluate callbacks (the test project is typed for Node, without the DOM)
declare const document: any;
declare const localStorage: any;
declare const sessionStorage: any;
declare const navigator: any;
declare const DataTransfer: any;
declare const Blob: any;
declare const getComputedStyle: any;

const WIDTHS = [375, 1440] as const;
const CALLER_PAGES = ['Playground', 'Tasks', 'Chat', 'Account'];
const ADMIN_PAGES = ['Overview', 'Keys', 'Accounts', 'All tasks', 'Channels', 'Usage', 'Audit log', 'Settings'];
const ADMIN_LINKS = ['Overview', 'Keys', 'Accounts', 'Channels', 'Usage', 'Audit log'];
/**
 * What docs/screenshots/keys-created.png shows in place of the secret just created: the page's text
 * is replaced in a screenshot-only step, so no secret of any gateway is committed.
 */
const SCREENSHOT_SECRET = 'mg_EXAMPLE-shown-once-not-a-real-key';
const run = promisify(execFile);

const available = fs.existsSync(CHROMIUM);
// CI (.ci/run) installs chromium and sets this: there a missing browser is a failure, not a skip
if (!available && process.env.MEDIAGATE_TEST_REQUIRE_CHROMIUM === '1')
  throw new Error(`${CHROMIUM} is not installed; MEDIAGATE_TEST_REQUIRE_CHROMIUM=1 requires it (apt-get install chromium)`);
let g: ListeningGateway;
let browser: Browser;

beforeAll(async () => {
  await ensureConsoleBuilt();
  if (!available) return;
  g = await listeningGateway({
    env: { MEDIAGATE_SANDBOX_TIMING: 'fast', MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: '40', MEDIAGATE_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY },
  });
  browser = await launchBrowser();
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await g?.close();
});

interface Signed {
  context: BrowserContext;
  page: Page;
  errors: ReturnType<typeof collectErrors>;
}

async function signIn(key: string, width = 1440): Promise<Signed> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  await page.goto(`${g.origin}/`);
  expect(new URL(page.url()).pathname).toBe('/console/');
  await page.getByRole('textbox', { name: 'API key' }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return { context, page, errors };
}

async function open(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
}

/** Drops the console's log of requests a test failed on purpose (`route.abort`): they are not errors of the page. */
function dropAborted(errors: ReturnType<typeof collectErrors>): void {
  const kept = errors.errors.filter((e) => !/net::ERR_FAILED/.test(e));
  errors.errors.splice(0, errors.errors.length, ...kept);
}

/** A key made through the admin API with the bootstrap admin key: its id and secret. */
async function newKey(name: string, role: 'caller' | 'admin' = 'caller'): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${g.origin}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, role }),
  });
  expect(res.status).toBe(200);
  const made = (await res.json()) as { id: string; key: string };
  return { id: made.id, secret: made.key };
}

/** The status of a public API call with `secret` (an admin key reads the public API too). */
const statusWith = (secret: string): Promise<number> => fetch(`${g.origin}/v1/tasks`, { headers: { authorization: `Bearer ${secret}` } }).then((r) => r.status);

describe('the built console', () => {
  it('loads under 300 KB of gzipped JavaScript at first (G366), from relative URLs (G364), with no inline script (G365)', () => {
    const html = fs.readFileSync(path.join(CONSOLE_DIR, 'dist', 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    expect(scripts.every((src) => src.startsWith('./assets/'))).toBe(true);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const gzipped = scripts.reduce((sum, src) => sum + zlib.gzipSync(fs.readFileSync(path.join(CONSOLE_DIR, 'dist', src)), { level: 9 }).length, 0);
    expect(gzipped).toBeLessThan(300 * 1024);
  });
});

describe.skipIf(!available)(`the web console in ${CHROMIUM}`, () => {
  describe('a caller', () => {
    let s: Signed;
    beforeAll(async () => {
      s = await signIn(g.key);
    });
    afterAll(async () => {
      await s.context.close();
    });

    it('is signed in by an HttpOnly SameSite=Strict cookie; the key is in no browser storage; no admin links', async () => {
      const cookies = await s.context.cookies();
      expect(cookies).toEqual([expect.objectContaining({ name: 'mediagate_session', httpOnly: true, sameSite: 'Strict', path: '/' })]);
      const stored = await s.page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
      expect(stored).not.toContain(g.key);
      const nav = s.page.getByRole('navigation');
      for (const name of CALLER_PAGES) await expect(nav.getByRole('link', { name, exact: true }).count()).resolves.toBe(1);
      for (const name of ADMIN_LINKS) await expect(nav.getByRole('link', { name, exact: true }).count()).resolves.toBe(0);
    });

    it('generates a pic-2 2k 16:9 image and previews it at its natural size, 2048x1152', async () => {
      const { page } = s;
      await open(page, 'Playground');
      await page.getByRole('combobox', { name: 'Family' }).selectOption('pic');
      await page.getByRole('combobox', { name: 'Model' }).selectOption('pic-2');
      await page.getByRole('textbox', { name: 'Prompt' }).fill('a lighthouse at dusk');
      await page.getByRole('combobox', { name: 'resolution', exact: true }).selectOption('2k');
      await page.getByRole('combobox', { name: 'size', exact: true }).selectOption('16:9');
      await page.getByRole('button', { name: 'Generate' }).click();
      const result = page.getByRole('img', { name: 'Result' });
      await result.waitFor({ timeout: 20_000 });
      await expect.poll(() => result.evaluate((img: any) => `${img.naturalWidth}x${img.naturalHeight}`), { timeout: 10_000 }).toBe('2048x1152');
      await expect(page.getByText('2048x1152', { exact: true }).isVisible()).resolves.toBe(true);
      await expect(page.getByRole('link', { name: 'Download' }).getAttribute('href')).resolves.toContain('/files/');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'caller-playground-result-1440.png'), fullPage: true });
    });

    it('uploads a file for a media field through the asset API, which fills it with assetId://', async () => {
      const { page } = s;
      const file = path.join(SCREENSHOTS, 'reference.png');
      fs.writeFileSync(file, await image(640, 480));
      await page.getByLabel('File for image_urls').setInputFiles(file);
      const field = page.getByRole('textbox', { name: 'image_urls', exact: true });
      await expect.poll(() => field.inputValue(), { timeout: 15_000 }).toMatch(/^assetId:\/\/\S+$/);
      await field.fill('');
    });

    it('takes a file dropped onto a media field (assetId://); copies the request as curl and SDK code; the copied curl is the request Generate sends', async () => {
      const { page, context } = s;
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: g.origin });
      // a real drop: a DataTransfer holding a PNG file, dispatched on the field's drop target
      const png = (await image(640, 480)).toString('base64');
      const dataTransfer = await page.evaluateHandle((b64: string) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([new Blob([bytes])], 'dropped.png', { type: 'image/png' }));
        return dt;
      }, png);
      const field = page.getByRole('textbox', { name: 'image_urls', exact: true });
      const target = page.locator('.drop', { has: field });
      await target.dispatchEvent('dragover', { dataTransfer });
      await target.dispatchEvent('drop', { dataTransfer });
      const said = target.locator('[aria-live="polite"]');
      await expect
        .poll(async () => `${await field.inputValue()} (${await said.textContent().catch(() => 'no status')})`, { timeout: 15_000 })
        .toMatch(/^assetId:\/\/\S+ \(Uploaded 1 file\)$/);
      const ref = await field.inputValue();

      await page.getByRole('button', { name: 'Copy as curl' }).click();
      const curl = await page.evaluate(() => navigator.clipboard.readText() as Promise<string>);
      await page.getByRole('button', { name: 'Copy as SDK code' }).click();
      const sdk = await page.evaluate(() => navigator.clipboard.readText() as Promise<string>);
      const [request] = await Promise.all([
        page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v1/pic/images'),
        page.getByRole('button', { name: 'Generate' }).click(),
      ]);
      const sent = request.postDataJSON() as Record<string, unknown>;
      expect(sent).toMatchObject({ model: 'pic-2', image_urls: [ref] });
      const created = (await (await request.response())!.json()) as { id: string };
      await page.getByRole('heading', { name: `Task ${created.id}` }).waitFor();
      await page.locator('[aria-live="polite"] strong', { hasText: 'completed' }).waitFor({ timeout: 20_000 });
      await page.getByRole('img', { name: 'Result' }).waitFor();

      // the curl names the same URL and body; run as it is (with the caller's key), it is accepted as the same request
      expect(curl).toContain(`curl -X POST '${request.url()}'`);
      const dashD = /-d '([\s\S]*)'$/.exec(curl);
      expect(JSON.parse(dashD![1]!.replace(/'\\''/g, "'"))).toEqual(sent);
      const { stdout } = await run('sh', ['-c', `${curl} -sS`], { env: { ...process.env, MEDIAGATE_API_KEY: g.key } });
      const byCurl = JSON.parse(stdout) as { id: string };
      expect(byCurl.id).toMatch(/\S/);
      const accepted = async (id: string): Promise<Record<string, unknown>> => {
        const res = await fetch(`${g.origin}/admin/v1/tasks/${id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
        expect(res.status).toBe(200);
        return ((await res.json()) as { request: Record<string, unknown> }).request;
      };
      const fromConsole = await accepted(created.id);
      expect(JSON.stringify(fromConsole)).toContain(ref); // the generated task used the dropped file
      expect(await accepted(byCurl.id)).toEqual(fromConsole);
      // the SDK code creates the same body with the family's client
      expect(sdk).toContain('mg.pic.create(');
      const sdkBody = /\.create\(([\s\S]*)\);\n/.exec(sdk);
      expect(JSON.parse(sdkBody![1]!)).toEqual(sent);
      await field.fill('');
    });

    it("shows the gateway's 400 next to the field it names", async () => {
      const { page } = s;
      await page.getByRole('combobox', { name: 'Family' }).selectOption('videos');
      await page.getByRole('combobox', { name: 'Model' }).selectOption('videos_fast');
      await page.getByRole('textbox', { name: 'Prompt' }).fill('waves');
      await page.getByRole('spinbutton', { name: 'duration', exact: true }).fill('99');
      await page.getByRole('button', { name: 'Generate' }).click();
      const field = page.locator('.field', { has: page.getByRole('spinbutton', { name: 'duration', exact: true }) });
      await field.getByRole('alert').waitFor();
      await expect(field.getByRole('alert').textContent()).resolves.toMatch(/duration/);
      expect(s.errors.failedStatuses).toContain(400);
    });

    it('a field error naming a long URL stays inside its form (G486)', async () => {
      const { page } = s;
      const create = (u: URL): boolean => u.pathname === '/v1/pic/images';
      const url = `https://images.example.com/${'a-long-path-segment/'.repeat(8)}reference.png`;
      // the gateway's 400 as it words a reference it could not fetch (answered here: no network needed)
      await page.route(create, (route) =>
        route.fulfill({
          status: 400,
          json: {
            error: {
              code: 'invalid_request',
              message: `image_urls[0]: could not fetch ${url}: connection refused`,
              param: 'image_urls[0]',
              type: 'invalid_request_error',
            },
          },
        }),
      );
      try {
        await page.getByRole('combobox', { name: 'Family' }).selectOption('pic');
        await page.getByRole('textbox', { name: 'Prompt' }).fill('a fox');
        await page.getByRole('textbox', { name: 'image_urls', exact: true }).fill(url);
        await page.getByRole('button', { name: 'Generate' }).click();
        const said = page.getByRole('alert').filter({ hasText: 'could not fetch' });
        await said.waitFor();
        // its text wraps inside its own box: nothing of it is wider than the box
        await expect(said.evaluate((el) => el.scrollWidth <= el.clientWidth)).resolves.toBe(true);
        await page.screenshot({ path: path.join(SCREENSHOTS, 'caller-playground-long-error-1440.png') });
      } finally {
        await page.unroute(create);
        await page.getByRole('textbox', { name: 'image_urls', exact: true }).fill('');
        // the form as the test before left it, for the next
        await page.getByRole('combobox', { name: 'Family' }).selectOption('videos');
        await page.getByRole('combobox', { name: 'Model' }).selectOption('videos_fast');
        await page.getByRole('textbox', { name: 'Prompt' }).fill('waves');
      }
    });

    it('generates a videos_fast video, its progress seen before it completes, then the preview', async () => {
      const { page } = s;
      await page.getByRole('spinbutton', { name: 'duration', exact: true }).fill('4');
      await page.getByRole('button', { name: 'Generate' }).click();
      const progress = page.getByRole('progressbar', { name: 'Progress' });
      await page.waitForFunction(
        () => {
          const bar = document.querySelector('progress');
          const status = document.querySelector('[aria-live="polite"] strong')?.textContent;
          return bar !== null && bar.value > 0 && bar.value < 100 && status !== 'completed';
        },
        undefined,
        { timeout: 20_000 },
      );
      await expect(progress.isVisible()).resolves.toBe(true);
      const video = page.getByRole('region').locator('video[aria-label="Result"]');
      await video.waitFor({ timeout: 30_000 });
      await expect.poll(() => video.evaluate((v: any) => v.readyState >= 1 && v.videoWidth > 0), { timeout: 15_000 }).toBe(true);
      await expect(page.getByText(/^\d+x\d+, \d+\.\d s$/).isVisible()).resolves.toBe(true);
    });

    it('cancels a motion task while it runs', async () => {
      const { page } = s;
      await page.getByRole('combobox', { name: 'Family' }).selectOption('motion');
      await page.getByRole('textbox', { name: 'Prompt' }).fill('a slow pan over hills');
      await page.getByRole('button', { name: 'Generate' }).click();
      await page.getByRole('button', { name: 'Cancel task' }).click({ timeout: 10_000 });
      await page.locator('[aria-live="polite"] strong', { hasText: 'cancelled' }).waitFor({ timeout: 15_000 });
    });

    it('streams a chat reply, with its token usage', async () => {
      const { page } = s;
      await open(page, 'Chat');
      await page.getByRole('textbox', { name: 'Message' }).fill('Tell me about lighthouses.');
      await page.getByRole('button', { name: 'Send' }).click();
      const reply = page.locator('.messages li.assistant p');
      const lengths = new Set<number>();
      await expect
        .poll(
          async () => {
            lengths.add((await reply.textContent())?.length ?? 0);
            return page.getByText(/^Tokens: \d+ prompt/).count();
          },
          { timeout: 30_000, interval: 50 },
        )
        .toBe(1);
      lengths.add((await reply.textContent())?.length ?? 0);
      // streamed: the reply was seen part-written (a length between none and the whole)
      const whole = Math.max(...lengths);
      expect(whole).toBeGreaterThan(0);
      expect([...lengths].some((n) => n > 0 && n < whole)).toBe(true);
      await expect(page.getByRole('button', { name: 'Stop' }).isDisabled()).resolves.toBe(true);
    });

    it('stops a reply while it streams: the stream ends, the partial reply stays, no console error', async () => {
      const { page } = s;
      const replies = page.locator('.messages li.assistant p');
      const before = await replies.count();
      await page
        .getByRole('textbox', { name: 'Message' })
        .fill('Tell me a long story about lighthouses, their keepers, their lamps and the ships they guided home through storms and fog.');
      await page.getByRole('button', { name: 'Send' }).click();
      const reply = replies.nth(before);
      await expect.poll(async () => (await reply.textContent())?.length ?? 0, { timeout: 15_000, interval: 50 }).toBeGreaterThan(0);
      const [aborted] = await Promise.all([
        page.waitForEvent('requestfailed', (r) => new URL(r.url()).pathname === '/v1/chat/completions'),
        page.getByRole('button', { name: 'Stop' }).click(),
      ]);
      expect(aborted.failure()?.errorText).toMatch(/ERR_ABORTED/);
      await expect.poll(() => page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
      await expect(page.getByRole('button', { name: 'Stop' }).isDisabled()).resolves.toBe(true);
      const partial = (await reply.textContent()) ?? '';
      expect(partial.length).toBeGreaterThan(0);
      // cut short: not the whole reply (whose last sentence ends so), and no usage, which only the end of a stream carries
      expect(partial).not.toMatch(/not written by a language model\.$/);
      await expect(page.getByText(/^Tokens: \d+ prompt/).count()).resolves.toBe(0);
      await expect(page.getByRole('alert').count()).resolves.toBe(0);
      expect(await reply.textContent()).toBe(partial);
      expect(s.errors.errors).toEqual([]);
    });

    it('lists its tasks and shows one with its preview', async () => {
      const { page } = s;
      await open(page, 'Tasks');
      const first = page.getByRole('table').getByRole('button').first();
      await first.waitFor();
      await page.getByRole('combobox', { name: 'Status' }).selectOption('completed');
      await page.getByRole('table').getByRole('button').first().click();
      await page
        .getByRole('region')
        .getByRole('heading', { name: /^Task / })
        .waitFor();
    });

    it("keeps a task's detail current: a queued task turns to completed by itself, from its status stream (G431)", async () => {
      const { page } = s;
      // the list answers its first task as still queued (the snapshot the detail starts from); its status stream comes a second later
      const list = (u: URL): boolean => u.pathname === '/v1/tasks';
      const events = (u: URL): boolean => /^\/v1\/tasks\/[^/]+\/events$/.test(u.pathname);
      // the list reloads when the stream ends, and the test's end unroutes: a request handed on
      // meanwhile is answered already, and that is no failure of this test
      const unlessHandled = (answer: Promise<void>): Promise<void> =>
        answer.catch((err: unknown) => {
          if (!String(err).includes('Route is already handled')) throw err;
        });
      await page.route(list, async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as { data: { status: string; progress: number }[] };
        body.data = body.data.map((t, i) => (i === 0 ? { ...t, status: 'queued', progress: 0 } : t));
        await unlessHandled(route.fulfill({ response: res, json: body }));
      });
      await page.route(events, async (route) => {
        await new Promise((done) => setTimeout(done, 1000));
        await unlessHandled(route.continue());
      });
      try {
        await open(page, 'Account');
        await open(page, 'Tasks');
        await Promise.all([
          page.waitForResponse((r) => list(new URL(r.url())) && new URL(r.url()).searchParams.get('status') === 'completed'),
          page.getByRole('combobox', { name: 'Status' }).selectOption('completed'),
        ]);
        await page.getByRole('table').getByRole('button').first().click();
        const status = page.getByRole('region', { name: /^Task / }).locator('dd[aria-live="polite"]');
        await expect(status.textContent()).resolves.toBe('queued (0%)');
        await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('completed (100%)');
      } finally {
        await page.unroute(list);
        await page.unroute(events);
      }
    });

    it('sends one request for a model filter typed, once the typing pauses (G431)', async () => {
      const { page } = s;
      await open(page, 'Account');
      await open(page, 'Tasks');
      await page.getByRole('table').getByRole('button').first().waitFor();
      const sent: string[] = [];
      const onRequest = (r: { url: () => string }): void => {
        const u = new URL(r.url());
        if (u.pathname === '/v1/tasks') sent.push(u.searchParams.get('model') ?? '');
      };
      page.on('request', onRequest);
      try {
        await page.getByRole('textbox', { name: 'Model filter' }).pressSequentially('pic-2', { delay: 60 });
        await expect.poll(() => sent).toEqual(['pic-2']);
        await page.waitForTimeout(600);
        expect(sent).toEqual(['pic-2']);
      } finally {
        page.off('request', onRequest);
      }
    });

    it('pages its tasks forwards and back: Next page sends the cursor, Previous page shows the first page again', async () => {
      const { page } = s;
      // one task a page (the console asks for 20): the paging of the real API with the tasks made above
      const list = (u: URL): boolean => u.pathname === '/v1/tasks';
      await page.route(list, (route) => {
        const u = new URL(route.request().url());
        u.searchParams.set('limit', '1');
        return route.continue({ url: u.toString() });
      });
      try {
        await open(page, 'Account'); // Tasks opened again: its first page, no filter
        await open(page, 'Tasks');
        const firstId = (): Promise<string | null> => page.getByRole('table').getByRole('button').first().textContent();
        await expect.poll(() => page.getByRole('table').getByRole('button').count()).toBe(1);
        const one = await firstId();
        await expect(page.getByRole('button', { name: 'Previous page' }).isDisabled()).resolves.toBe(true);
        const [next] = await Promise.all([
          page.waitForRequest((r) => new URL(r.url()).pathname === '/v1/tasks' && new URL(r.url()).searchParams.has('cursor')),
          page.getByRole('button', { name: 'Next page' }).click(),
        ]);
        expect(new URL(next.url()).searchParams.get('cursor')).toMatch(/\S/);
        await expect.poll(firstId).not.toBe(one);
        await page.getByText('Page 2', { exact: true }).waitFor();
        await page.getByRole('button', { name: 'Previous page' }).click();
        await expect.poll(firstId).toBe(one);
        await expect.poll(() => page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
        // Previous, now disabled, gave the focus to Next
        await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Next page');
        expect(await seriousViolations(page)).toEqual([]);
      } finally {
        await page.unroute(list);
      }
    });

    it('gets 403 from admin routes, and a change without the CSRF token is refused', async () => {
      const { page } = s;
      const statuses = await page.evaluate(async () => {
        const admin = await fetch('../admin/v1/keys');
        const noToken = await fetch('../v1/pic/images', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'pic', prompt: 'x' }),
        });
        return { admin: admin.status, noToken: noToken.status, code: ((await noToken.json()) as any).error.code };
      });
      expect(statuses).toEqual({ admin: 403, noToken: 403, code: 'csrf_token_invalid' });
      await page.goto(`${g.origin}/console/#/keys`);
      await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();
    });

    it('reaches every page and Sign out by keyboard alone', async () => {
      const { page } = s;
      await page.goto(`${g.origin}/console/#/playground`);
      await page.reload(); // focus starts at the top of a fresh page
      await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();
      const reached = new Set<string>();
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press('Tab');
        reached.add(await page.evaluate(() => document.activeElement?.innerText ?? ''));
      }
      expect([...reached]).toEqual(expect.arrayContaining([...CALLER_PAGES, 'Sign out']));
      // Tab from the top of a fresh page to the Account link, then Enter opens its page
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();
      for (let i = 0; i < 12 && (await page.evaluate(() => document.activeElement?.innerText ?? '')) !== 'Account'; i++) await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.tagName)).resolves.toBe('A');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
      // the playground's own controls, Generate included, are reachable too
      await page.goto(`${g.origin}/console/#/playground`);
      await page.reload();
      await page.getByRole('button', { name: 'Generate' }).waitFor();
      const controls = new Set<string>();
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        controls.add(await page.evaluate(() => document.activeElement?.innerText ?? ''));
      }
      expect([...controls]).toContain('Generate');
    });

    it('passes axe (no serious or critical violations) on every page at 375 px and 1440 px; screenshots of each', async () => {
      const { page } = s;
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        for (const name of CALLER_PAGES) {
          await open(page, name);
          await page.waitForLoadState('networkidle');
          expect(await seriousViolations(page), `${name} at ${width} px`).toEqual([]);
          await page.screenshot({ path: path.join(SCREENSHOTS, `caller-${name.toLowerCase().replace(/ /g, '-')}-${width}.png`), fullPage: true });
        }
      }
      expect(s.errors.errors).toEqual([]);
      expect(s.errors.failedStatuses.every((st) => [400, 401, 403].includes(st))).toBe(true);
    });
  });

  describe('an admin', () => {
    let s: Signed;
    beforeAll(async () => {
      s = await signIn(ADMIN_KEY);
    });
    afterAll(async () => {
      await s.context.close();
    });

    it('creates a key, whose shown secret works on the public API, then revokes it: 401 after', async () => {
      const { page } = s;
      await open(page, 'Keys');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('textbox', { name: 'Name' }).fill('made in the console');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const secret = (await page.locator('.secret code').textContent())!;
      expect(secret).toMatch(/^mg_/);
      // screenshot-only: a fixed throwaway shown in place of the secret (docs/screenshots/keys-created.png), then the real one back
      const shown = page.locator('.secret code');
      await shown.evaluate((el: any, text: string) => {
        el.textContent = text;
      }, SCREENSHOT_SECRET);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-keys-created-1440.png'), fullPage: true });
      await shown.evaluate((el: any, text: string) => {
        el.textContent = text;
      }, secret);
      expect(await shown.textContent()).toBe(secret);
      const use = (): Promise<number> => fetch(`${g.origin}/v1/tasks`, { headers: { authorization: `Bearer ${secret}` } }).then((r) => r.status);
      expect(await use()).toBe(200);
      const row = page.getByRole('row', { name: /made in the console/ });
      // its models and limits can be changed
      await row.getByRole('button', { name: 'Change made in the console' }).click();
      await page.getByRole('textbox', { name: 'Models (empty: all)' }).last().fill('pic-2');
      await page.getByRole('spinbutton', { name: 'Tasks in flight (empty: default)' }).fill('3');
      await page.getByRole('button', { name: 'Save' }).click();
      await row.getByRole('cell', { name: 'pic-2', exact: true }).waitFor();
      await row.getByRole('cell', { name: 'tasks_in_flight 3' }).waitFor();
      await row.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke' }).click();
      await row.getByText('revoked', { exact: true }).waitFor();
      expect(await use()).toBe(401);
    });

    it('opens and closes the new key form with Create key (aria-expanded); the secret shown goes when its key is revoked (G431)', async () => {
      const { page } = s;
      await open(page, 'Keys');
      const toggle = page.getByRole('button', { name: 'Create key' });
      await toggle.click();
      await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('true');
      await page.getByRole('heading', { name: 'New key' }).waitFor();
      await toggle.click();
      await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('false');
      await expect(page.getByRole('heading', { name: 'New key' }).count()).resolves.toBe(0);
      await toggle.click();
      await page.getByRole('textbox', { name: 'Name' }).fill('gone with its secret');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await page.locator('.secret code').waitFor();
      const row = page.getByRole('row', { name: /gone with its secret/ });
      await row.getByRole('button', { name: 'Revoke', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke' }).click();
      await row.getByText('revoked', { exact: true }).waitFor();
      await expect(page.locator('.secret').count()).resolves.toBe(0);
    });

    it('rotates a key only after a confirmation, with the grace period chosen there: both secrets work during it', async () => {
      const { page } = s;
      const made = await newKey('rotated in the console');
      await open(page, 'Overview'); // the Keys page lists the key made just now when it is opened again
      await open(page, 'Keys');
      const row = page.getByRole('row', { name: /rotated in the console/ });
      // asked first; keeping the current secret sends nothing
      let rotates = 0;
      page.on('request', (r) => {
        if (r.method() === 'POST' && /\/rotate$/.test(new URL(r.url()).pathname)) rotates++;
      });
      await row.getByRole('button', { name: 'Rotate', exact: true }).click();
      const dialog = page.getByRole('alertdialog');
      await expect(dialog.textContent()).resolves.toContain(`Rotate rotated in the console (${made.id})?`);
      await expect(dialog.getByText('This is the key you are signed in with', { exact: false }).count()).resolves.toBe(0);
      await dialog.getByRole('button', { name: 'Keep the current secret' }).click();
      await expect(dialog.count()).resolves.toBe(0);
      expect(rotates).toBe(0);
      // then rotated with an hour of grace
      await row.getByRole('button', { name: 'Rotate', exact: true }).click();
      await dialog.getByRole('combobox', { name: 'Old secret still accepted for' }).selectOption({ label: '1 hour' });
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-keys-rotate-confirm-1440.png'), fullPage: true });
      const [request] = await Promise.all([
        page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === `/admin/v1/keys/${made.id}/rotate`),
        dialog.getByRole('button', { name: 'Rotate', exact: true }).click(),
      ]);
      expect(request.postDataJSON()).toEqual({ grace_seconds: 3600 });
      const secret = (await page.locator('.secret code').textContent())!;
      expect(secret).toMatch(/^mg_/);
      expect(secret).not.toBe(made.secret);
      expect(await statusWith(secret)).toBe(200);
      expect(await statusWith(made.secret)).toBe(200); // the old one, in its hour of grace
      expect(rotates).toBe(1);
    });

    it('sends one request for a double click on Create, Grant or the confirmation of Rotate; the controls are disabled meanwhile', async () => {
      const { page } = s;
      const posts: string[] = [];
      const count = (r: { method(): string; url(): string }): void => {
        if (r.method() === 'POST') posts.push(new URL(r.url()).pathname);
      };
      page.on('request', count);
      try {
        // Create key: one key made, its form disabled while the request is pending
        await open(page, 'Keys');
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.getByRole('textbox', { name: 'Name' }).fill('double-clicked');
        let release: () => void = () => undefined;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        await page.route('**/admin/v1/keys', async (route) => {
          if (route.request().method() === 'POST') await held;
          await route.continue();
        });
        await page.getByRole('button', { name: 'Create', exact: true }).dblclick();
        await expect.poll(() => page.getByRole('button', { name: 'Create', exact: true }).isDisabled()).toBe(true);
        await expect(page.getByRole('textbox', { name: 'Name' }).isDisabled()).resolves.toBe(true);
        release();
        await page.locator('.secret code').waitFor();
        await page.unroute('**/admin/v1/keys');
        await page.waitForLoadState('networkidle');
        expect(posts.filter((p) => p === '/admin/v1/keys')).toHaveLength(1);
        const listed = await fetch(`${g.origin}/admin/v1/keys?q=double-clicked`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
        expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(1);

        // Rotate's confirmation: one rotation
        const row = page.getByRole('row', { name: /double-clicked/ });
        await row.getByRole('button', { name: 'Rotate', exact: true }).click();
        await page.getByRole('alertdialog').getByRole('button', { name: 'Rotate', exact: true }).dblclick();
        await page.getByText('The new secret of double-clicked.', { exact: false }).waitFor();
        await page.waitForLoadState('networkidle');
        expect(posts.filter((p) => /\/rotate$/.test(p))).toHaveLength(1);

        // Grant: credits added once
        await open(page, 'Accounts');
        const account = page
          .getByRole('row')
          .filter({ has: page.getByRole('button', { name: /^Manage / }) })
          .first();
        const before = Number(await account.locator('td').nth(2).textContent());
        await account.getByRole('button', { name: /^Manage / }).click();
        await page.getByRole('spinbutton', { name: 'Credits' }).fill('7');
        await page.getByRole('textbox', { name: 'Note' }).fill('double-clicked grant');
        await page.getByRole('button', { name: 'Grant' }).dblclick();
        await expect.poll(async () => Number(await account.locator('td').nth(2).textContent())).toBe(before + 7);
        await page.waitForLoadState('networkidle');
        expect(posts.filter((p) => p.endsWith('/grants'))).toHaveLength(1);
        expect(Number(await account.locator('td').nth(2).textContent())).toBe(before + 7);
      } finally {
        page.off('request', count);
      }
    });

    it('moves the focus into each confirmation and panel as it opens; Escape closes it and the focus is back on the button that opened it', async () => {
      const { page } = s;
      const hasFocus = (locator: ReturnType<Page['locator']>): Promise<boolean> => locator.evaluate((el: any) => el === document.activeElement);
      /** Opens with the keyboard (Enter on the button), checks where the focus went, Escape, checks it is closed and the focus back. */
      const roundTrip = async (
        opener: ReturnType<Page['locator']>,
        focusedInside: ReturnType<Page['locator']>,
        panel: ReturnType<Page['locator']>,
      ): Promise<void> => {
        await opener.focus();
        await page.keyboard.press('Enter');
        await expect.poll(() => hasFocus(focusedInside)).toBe(true);
        await page.keyboard.press('Escape');
        await expect.poll(() => panel.count()).toBe(0);
        await expect.poll(() => hasFocus(opener)).toBe(true);
      };
      const made = await newKey('focus round trip');
      await open(page, 'Overview');
      await open(page, 'Keys');
      const row = page.getByRole('row', { name: /focus round trip/ });
      const dialog = page.getByRole('alertdialog');
      // Revoke's confirmation focuses its safe choice
      await roundTrip(row.getByRole('button', { name: 'Revoke' }), dialog.getByRole('button', { name: 'Keep the key' }), dialog);
      await roundTrip(
        row.getByRole('button', { name: 'Rotate', exact: true }),
        dialog.getByRole('combobox', { name: 'Old secret still accepted for' }),
        dialog,
      );
      await roundTrip(
        row.getByRole('button', { name: 'Change focus round trip' }),
        page.getByRole('textbox', { name: 'Models (empty: all)' }).last(),
        page.getByRole('heading', { name: 'Change focus round trip' }),
      );
      await roundTrip(
        page.getByRole('button', { name: 'Create key' }),
        page.getByRole('textbox', { name: 'Name' }),
        page.getByRole('heading', { name: 'New key' }),
      );
      expect(await statusWith(made.secret)).toBe(200); // nothing was revoked or rotated
      await open(page, 'Accounts');
      const manage = page.getByRole('button', { name: /^Manage / }).first();
      await roundTrip(manage, page.getByRole('spinbutton', { name: 'Credits' }), page.getByRole('region', { name: /: balance / }));
      // the Manage panel's Close does the same
      await manage.click();
      await page
        .getByRole('region', { name: /: balance / })
        .getByRole('button', { name: 'Close' })
        .click();
      await expect.poll(() => hasFocus(manage)).toBe(true);
    });

    it('grants credits and sees the balance', async () => {
      const { page } = s;
      await open(page, 'Accounts');
      const row = page
        .getByRole('row')
        .filter({ has: page.getByRole('button', { name: /^Manage / }) })
        .first();
      const before = Number(await row.locator('td').nth(2).textContent());
      await row.getByRole('button', { name: /^Manage / }).click();
      await page.getByRole('spinbutton', { name: 'Credits' }).fill('25');
      await page.getByRole('textbox', { name: 'Note' }).fill('from the end-to-end test');
      await page.getByRole('button', { name: 'Grant' }).click();
      await expect.poll(async () => Number(await row.locator('td').nth(2).textContent())).toBe(before + 25);
      await page.getByRole('cell', { name: 'from the end-to-end test' }).waitFor();
    });

    it('says "Granted N credits" in a status region after a grant (G431)', async () => {
      const { page } = s;
      await open(page, 'Overview');
      await open(page, 'Accounts');
      await page
        .getByRole('button', { name: /^Manage / })
        .first()
        .click();
      await page.getByRole('spinbutton', { name: 'Credits' }).fill('7');
      await page.getByRole('textbox', { name: 'Note' }).fill('said when granted');
      await page.getByRole('button', { name: 'Grant' }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Granted' }).textContent()).toBe('Granted 7 credits');
    });

    it('draws a focus ring of at least 3:1 against the white panels and the dark header (G431)', async () => {
      const { page } = s;
      const luminance = (rgb: string): number => {
        const [r, g, b] = rgb
          .match(/\d+(\.\d+)?/g)!
          .slice(0, 3)
          .map((c) => {
            const v = Number(c) / 255;
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
          });
        return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
      };
      const contrast = (a: string, b: string): number => {
        const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
        return (x! + 0.05) / (y! + 0.05);
      };
      /** The ring of the control focused from the keyboard, and the background it is drawn on (its nearest opaque one). */
      const ring = () =>
        page.evaluate(() => {
          const el = document.activeElement;
          const style = getComputedStyle(el);
          let bg = el.parentElement;
          while (bg && /rgba\(0, 0, 0, 0\)|transparent/.test(getComputedStyle(bg).backgroundColor)) bg = bg.parentElement;
          return {
            visible: el.matches(':focus-visible') as boolean,
            style: style.outlineStyle as string,
            width: Number.parseFloat(style.outlineWidth),
            color: style.outlineColor as string,
            background: (bg ? getComputedStyle(bg).backgroundColor : 'rgb(255, 255, 255)') as string,
            panel: bg?.classList.contains('panel') === true,
          };
        });
      await open(page, 'Keys');
      const toggle = page.getByRole('button', { name: 'Create key' });
      await toggle.click();
      await page.keyboard.press('Tab'); // the Name field has the focus; Role takes it from the keyboard
      const inPanel = await ring();
      expect(inPanel).toMatchObject({ visible: true, style: 'solid', panel: true, background: 'rgb(255, 255, 255)' });
      expect(inPanel.width).toBeGreaterThanOrEqual(2);
      expect(contrast(inPanel.color, inPanel.background)).toBeGreaterThanOrEqual(3);
      await toggle.click();
      await page.getByRole('button', { name: 'Sign out' }).focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      const inHeader = await ring();
      expect(inHeader).toMatchObject({ visible: true, style: 'solid', background: 'rgb(20, 33, 61)' });
      expect(contrast(inHeader.color, inHeader.background)).toBeGreaterThanOrEqual(3);
    });

    it("sees every tenant's tasks with a timeline, probes a channel, exports usage as CSV", async () => {
      const { page } = s;
      await open(page, 'All tasks');
      await page.getByRole('table').getByRole('button').first().click();
      await page.getByRole('heading', { name: 'Timeline' }).waitFor();
      await page.getByRole('table', { name: 'Attempts' }).waitFor();
      // at 375 px the detail's heading (a long task id) wraps inside its panel instead of overflowing it
      await page.setViewportSize({ width: 375, height: 900 });
      const title = page.locator('#admin-task-title');
      await expect(title.evaluate((el: any) => el.scrollWidth <= el.clientWidth)).resolves.toBe(true);
      await expect(title.evaluate((el: any) => el.getBoundingClientRect().right <= document.documentElement.clientWidth)).resolves.toBe(true);
      await page.setViewportSize({ width: 1440, height: 900 });
      await open(page, 'Channels');
      await page
        .getByRole('button', { name: /^Probe / })
        .first()
        .click();
      await page.getByRole('status').filter({ hasText: 'answers' }).waitFor();
      await open(page, 'Usage');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      const csv = fs.readFileSync((await download.path())!, 'utf8');
      expect(csv.split('\n')[0]).toBe(
        'bucket,group,submitted,completed,failed,cancelled,video_seconds,images,chat_requests,prompt_tokens,completion_tokens,credits_captured',
      );
      expect(csv.split('\n').length).toBeGreaterThan(2);
    });

    it('gives a status one colour in both Overview charts, named in each legend; every hour of the day a column (G430)', async () => {
      const { page } = s;
      await page.setViewportSize({ width: 1440, height: 900 });
      await open(page, 'Overview');
      const charts = page.locator('figure.chart:has(svg.columns)');
      await expect.poll(() => charts.count()).toBe(2);
      // per chart: each legend entry's name and swatch colour, and each segment's status and fill
      const seen = await charts.evaluateAll((figs: any[]) =>
        figs.map((f) => ({
          legend: Object.fromEntries(
            [...f.querySelectorAll('.legend li')].map((li: any) => [li.textContent, getComputedStyle(li.querySelector('.swatch')).backgroundColor]),
          ),
          fills: [...f.querySelectorAll('svg rect')].map((r: any) => [/ (\w+): /.exec(r.querySelector('title').textContent)![1], getComputedStyle(r).fill]),
          columns: f.querySelectorAll('svg.columns > g').length,
        })),
      );
      const [minutes, hours] = seen as { legend: Record<string, string>; fills: [string, string][]; columns: number }[];
      expect(Object.keys(hours!.legend)).toEqual(['completed', 'failed', 'cancelled']);
      for (const status of ['completed', 'failed', 'cancelled']) expect(hours!.legend[status], status).toBe(minutes!.legend[status]);
      // the six statuses, six colours; a segment is the colour its legend says
      expect(new Set(Object.values(minutes!.legend)).size).toBe(6);
      for (const { legend, fills } of [minutes!, hours!]) {
        expect(fills.length).toBeGreaterThan(0);
        for (const [status, fill] of fills) expect(fill, status).toBe(legend[status]);
      }
      // the tasks of the caller's tests ended in the last hour or two: the other hours are columns of zeros
      expect(hours!.columns).toBe(24);
      await open(page, 'Usage');
      await page.getByRole('combobox', { name: 'Interval' }).selectOption('hour');
      await expect.poll(() => page.locator('table tbody tr').count()).toBe(24);
      await expect(page.locator('svg.columns > g').count()).resolves.toBe(24);
      await page.getByRole('combobox', { name: 'Interval' }).selectOption('day');
      await expect.poll(() => page.locator('table tbody tr').count()).toBe(30);
      // the chart keeps a readable height at both widths
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        const box = (await page.locator('svg.columns').boundingBox())!;
        expect(box.height, `at ${width} px`).toBeLessThanOrEqual(280);
        expect(box.height, `at ${width} px`).toBeGreaterThan(120);
      }
      await page.getByRole('combobox', { name: 'Interval' }).selectOption('hour');
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await page.screenshot({ path: path.join(SCREENSHOTS, `admin-usage-hour-${width}.png`), fullPage: true });
      }
      await page.getByRole('combobox', { name: 'Interval' }).selectOption('day');
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    it('passes axe on every page at 375 px and 1440 px; screenshots of each', async () => {
      const { page } = s;
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        for (const name of [...ADMIN_PAGES, ...CALLER_PAGES]) {
          await open(page, name);
          await page.waitForLoadState('networkidle');
          expect(await seriousViolations(page), `${name} at ${width} px`).toEqual([]);
          await page.screenshot({ path: path.join(SCREENSHOTS, `admin-${name.toLowerCase().replace(/ /g, '-')}-${width}.png`), fullPage: true });
        }
      }
    }, 90_000); // twelve pages at two widths, each checked by axe: over the default 30 s on a busy machine

    it('reaches every operator page by keyboard alone, and opens one with it', async () => {
      const { page } = s;
      await page.goto(`${g.origin}/console/#/overview`);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      const reached = new Set<string>();
      for (let i = 0; i < 18; i++) {
        await page.keyboard.press('Tab');
        reached.add(await page.evaluate(() => document.activeElement?.innerText ?? ''));
      }
      expect([...reached]).toEqual(expect.arrayContaining([...ADMIN_PAGES, ...CALLER_PAGES, 'Sign out']));
      // and opened by it: Shift+Tab back to Usage, Enter
      for (let i = 0; i < 18 && (await page.evaluate(() => document.activeElement?.innerText ?? '')) !== 'Usage'; i++) await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor({ timeout: 10_000 });
    });

    it('skips to the content from the keyboard without leaving the page: the URL stays, <main> has the focus', async () => {
      const { page } = s;
      await page.goto(`${g.origin}/console/#/keys`);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.innerText)).resolves.toBe('Skip to content');
      await page.keyboard.press('Enter');
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('main');
      expect(new URL(page.url()).hash).toBe('#/keys');
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Keys');
      // the next Tab goes on inside the page, not back to the navigation
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.closest('main') !== null)).resolves.toBe(true);
    });

    it('says a page change: the title names the page, its heading takes the focus; not on the first load (G430)', async () => {
      const { page } = s;
      await page.goto(`${g.origin}/console/#/keys`);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
      await expect.poll(() => page.title()).toBe('Keys — mediagate console');
      // the first load: the focus stays at the top of the document, as on any page
      await expect(page.evaluate(() => document.activeElement?.tagName)).resolves.toBe('BODY');
      for (const name of ['Usage', 'Audit log']) {
        await open(page, name);
        await expect.poll(() => page.title()).toBe(`${name} — mediagate console`);
        await expect.poll(() => page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent}`)).toBe(`H1 ${name}`);
      }
      // the next Tab goes on inside the page
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.closest('main') !== null)).resolves.toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
    });

    it('wraps the audit details at 1440 px (no sideways scroll); the Keys actions cell stays a table cell (its row borders)', async () => {
      const { page } = s;
      await page.setViewportSize({ width: 1440, height: 900 });
      await open(page, 'Audit log');
      await page
        .getByRole('cell', { name: /"name":/ })
        .first()
        .waitFor();
      const wrap = page.locator('.table-wrap');
      await expect(wrap.evaluate((el: any) => el.scrollWidth <= el.clientWidth)).resolves.toBe(true);
      await open(page, 'Keys');
      const actions = page.locator('td:has(.row-actions)').first();
      await actions.waitFor();
      await expect(actions.evaluate((el: any) => getComputedStyle(el).display)).resolves.toBe('table-cell');
    });

    it('shows each setting by its environment variable in its section, where it came from, secrets redacted (G447)', async () => {
      const { page } = s;
      await page.setViewportSize({ width: 1440, height: 900 });
      await open(page, 'Settings');
      const server = page.getByRole('table', { name: 'Server', exact: true });
      const row = (table: typeof server, name: string) => table.getByRole('row', { name: new RegExp(`^${name} `) });
      await expect(row(server, 'MEDIAGATE_SANDBOX_TIMING').count()).resolves.toBe(0); // in its own section
      await expect(row(page.getByRole('table', { name: 'Sandbox', exact: true }), 'MEDIAGATE_SANDBOX_TIMING').textContent()).resolves.toContain(
        'fastenvironment',
      );
      await expect(row(server, 'MEDIAGATE_LOG_LEVEL').getByRole('cell').last().textContent()).resolves.toMatch(/^(environment|default)$/);
      const admin = row(page.getByRole('table', { name: 'Keys and caller URLs', exact: true }), 'MEDIAGATE_BOOTSTRAP_ADMIN_KEY');
      await expect(admin.textContent()).resolves.toContain('[redacted]environment');
      await expect(page.locator('main').textContent()).resolves.not.toContain(ADMIN_KEY);
      // the configuration as the process holds it, folded until asked for
      const held = page.getByRole('table', { name: 'Effective settings (read-only; secrets redacted)' });
      await expect(held.isVisible()).resolves.toBe(false);
      await page.getByText('The configuration as the process holds it').click();
      await expect(held.getByRole('row', { name: /^sandboxTiming / }).textContent()).resolves.toContain('fast');
      const wrap = page.locator('.table-wrap').first();
      await expect(wrap.evaluate((el: any) => el.scrollWidth <= el.clientWidth)).resolves.toBe(true);
    });

    it('keeps the header to two lines at 375 px: the pages scroll sideways, the current one scrolled into view (G448)', async () => {
      const { page } = s;
      await page.setViewportSize({ width: 375, height: 700 });
      await open(page, 'Settings'); // the last of the operator's pages
      expect((await page.locator('header').boundingBox())!.height).toBeLessThan(100); // was ~190 px on three lines of links
      const nav = page.getByRole('navigation', { name: 'Pages' });
      await expect(nav.evaluate((el: any) => el.scrollWidth > el.clientWidth)).resolves.toBe(true);
      const box = (await nav.boundingBox())!;
      const current = (await nav.getByRole('link', { name: 'Settings', exact: true }).boundingBox())!;
      expect(current.x).toBeGreaterThanOrEqual(box.x - 1);
      expect(current.x + current.width).toBeLessThanOrEqual(box.x + box.width + 1);
      await expect(page.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(true);
      await page.setViewportSize({ width: 1440, height: 900 });
    });

    it("names each change's actor beside its key id, and filters by action and actor (G449)", async () => {
      const { page } = s;
      const admins = await fetch(`${g.origin}/admin/v1/keys?role=admin`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      const admin = ((await admins.json()) as { data: Array<{ id: string; name: string }> }).data.find((k) => k.name === 'bootstrap-admin')!;
      await open(page, 'Audit log');
      const table = page.getByRole('table', { name: 'Changes made through the admin API and the CLI' });
      const actors = async (): Promise<string[]> => table.locator('tbody tr td:nth-child(2)').allTextContents();
      await page.getByRole('combobox', { name: 'Action' }).selectOption('key.create');
      await page.getByRole('textbox', { name: 'Actor' }).fill(admin.id);
      // the keys this admin made in the tests above: each row says who by name and id
      await expect.poll(async () => [...new Set(await actors())]).toEqual([`bootstrap-admin${admin.id}`]);
      await expect(new Set(await table.locator('tbody tr td:nth-child(3)').allTextContents())).toEqual(new Set(['key.create']));
      await page.getByRole('textbox', { name: 'Actor' }).fill('bootstrap'); // the keys of the settings: no key made them
      await expect.poll(async () => [...new Set(await actors())]).toEqual(['bootstrap']);
      await page.getByRole('combobox', { name: 'Action' }).selectOption('account.grant');
      await page.getByRole('cell', { name: 'No changes match these filters.' }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole('combobox', { name: 'Action' }).selectOption('');
      await page.getByRole('textbox', { name: 'Actor' }).fill('');
    });

    it('offers Cancel task only when the cancel would work (cancellable), else says why not', async () => {
      const { page } = s;
      await open(page, 'All tasks');
      // the sandbox stops every generation: the detail is answered as a provider that cannot stop one would be (G319)
      let cancellable = false;
      const detail = (u: URL): boolean => /^\/admin\/v1\/tasks\/[^/]+$/.test(u.pathname);
      await page.route(detail, async (route) => {
        if (route.request().method() !== 'GET') return route.continue();
        const res = await route.fetch();
        const detail = { ...((await res.json()) as object), status: 'processing', cancellable };
        return route.fulfill({ response: res, json: detail });
      });
      try {
        await page.getByRole('table').getByRole('button').first().click();
        await page.getByText('This generation cannot be stopped at its provider; it ends on its own.').waitFor();
        await expect(page.getByRole('button', { name: 'Cancel task' }).count()).resolves.toBe(0);
        expect(await seriousViolations(page)).toEqual([]);
        cancellable = true;
        await page.getByRole('table').getByRole('button').nth(1).click();
        await page.getByRole('button', { name: 'Cancel task' }).waitFor();
        await expect(page.getByText('This generation cannot be stopped', { exact: false }).count()).resolves.toBe(0);
      } finally {
        await page.unroute(detail);
      }
    });

    it('shows an empty row for a list with nothing in it (All tasks filtered, Audit log)', async () => {
      const { page } = s;
      await open(page, 'All tasks');
      await page.getByRole('textbox', { name: 'Key id' }).fill('key_matches_nothing');
      await page.getByRole('cell', { name: 'No tasks.' }).waitFor();
      await open(page, 'Audit log');
      await page.getByRole('textbox', { name: 'Target' }).fill('target_matches_nothing');
      await page.getByRole('cell', { name: 'No changes to this target.' }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
    });

    it('pages Keys forwards and back with the cursors of the pages seen', async () => {
      const { page } = s;
      // two keys a page (the console asks for 100): the real API's paging with the keys made above
      const list = (u: URL): boolean => u.pathname === '/admin/v1/keys';
      await page.route(list, (route) => {
        const u = new URL(route.request().url());
        u.searchParams.set('limit', '2');
        return route.continue({ url: u.toString() });
      });
      try {
        await open(page, 'Overview');
        await open(page, 'Keys');
        const ids = (): Promise<string[]> => page.locator('tbody tr td:nth-child(2) code').allTextContents();
        await expect.poll(async () => (await ids()).length).toBe(2);
        const first = await ids();
        await expect(page.getByRole('button', { name: 'Previous page' }).isDisabled()).resolves.toBe(true);
        await page.getByRole('button', { name: 'Next page' }).click();
        await page.getByText('Page 2', { exact: true }).waitFor();
        await expect.poll(async () => (await ids()).some((id) => first.includes(id))).toBe(false);
        const second = await ids();
        await page.getByRole('button', { name: 'Next page' }).click();
        await page.getByText('Page 3', { exact: true }).waitFor();
        await expect.poll(async () => (await ids()).some((id) => second.includes(id) || first.includes(id))).toBe(false);
        await page.getByRole('button', { name: 'Previous page' }).click();
        await expect.poll(ids).toEqual(second);
        await page.getByRole('button', { name: 'Previous page' }).click();
        await expect.poll(ids).toEqual(first);
        expect(await seriousViolations(page)).toEqual([]);
      } finally {
        await page.unroute(list);
      }
    });

    it("puts a key form's 400 next to the field it names (aria-invalid, aria-describedby); others stay the form's", async () => {
      const { page } = s;
      await open(page, 'Keys');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('textbox', { name: 'Name' }).fill('bad models');
      const models = page.getByRole('textbox', { name: 'Models (empty: all)' });
      await models.fill('pic-2, no-such-model');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const modelsField = page.locator('.field', { has: models });
      await modelsField.getByRole('alert').waitFor();
      await expect(modelsField.getByRole('alert').textContent()).resolves.toMatch(/models\[1\] must be a model of this gateway/);
      await expect(models.getAttribute('aria-invalid')).resolves.toBe('true');
      const described = (await models.getAttribute('aria-describedby'))!;
      await expect(page.locator(`#${described}`).textContent()).resolves.toMatch(/models\[1\]/);
      await expect(page.getByRole('textbox', { name: 'Name' }).getAttribute('aria-invalid')).resolves.toBe('false');
      expect(await seriousViolations(page)).toEqual([]);
      // an expiry in the past: the message moves to Expires
      await models.fill('');
      await page.getByLabel('Expires', { exact: true }).fill('2001-01-01T00:00');
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      const expires = page.locator('.field', { has: page.getByLabel('Expires', { exact: true }) });
      await expires.getByRole('alert').waitFor();
      await expect(expires.getByRole('alert').textContent()).resolves.toMatch(/expires_at must be in the future/);
      await expect(modelsField.getByRole('alert').count()).resolves.toBe(0);
      await expect(models.getAttribute('aria-invalid')).resolves.toBe('false');
      await page.keyboard.press('Escape');
    });

    it('says "Cannot reach the gateway" with Retry when a load gets no answer, and no empty state beside it', async () => {
      const { page } = s;
      await open(page, 'Overview');
      const usage = (u: URL): boolean => u.pathname === '/admin/v1/usage';
      await page.route(usage, (route) => route.abort('failed'));
      try {
        await open(page, 'Usage');
        await page.getByRole('alert').filter({ hasText: 'Cannot reach the gateway' }).waitFor();
        await expect(page.getByText('Failed to fetch', { exact: false }).count()).resolves.toBe(0);
        await expect(page.getByText('Nothing yet.').count()).resolves.toBe(0);
        await expect(page.getByText('Nothing in this period.').count()).resolves.toBe(0);
        await expect(page.getByRole('table').count()).resolves.toBe(0);
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-usage-unreachable-1440.png'), fullPage: true });
      } finally {
        await page.unroute(usage);
      }
      await page.getByRole('button', { name: 'Retry' }).click();
      await page.getByRole('table').waitFor();
      await expect(page.getByRole('alert').count()).resolves.toBe(0);
      dropAborted(s.errors);
    });

    it('stays signed in when the sign-out gets no answer, says so, and can sign out again', async () => {
      const { page } = s;
      const session = (u: URL): boolean => u.pathname === '/console/session';
      await page.route(session, (route) => (route.request().method() === 'DELETE' ? route.abort('failed') : route.continue()));
      try {
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('alert').filter({ hasText: 'Could not sign out: the gateway did not answer. Try again.' }).waitFor();
        await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isEnabled()).toBe(true);
        await expect(page.getByRole('textbox', { name: 'API key' }).count()).resolves.toBe(0);
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-sign-out-failed-1440.png') });
        // the session is still valid: a reload is still signed in
        expect(await page.evaluate(() => fetch('../console/session').then((r) => r.status))).toBe(200);
      } finally {
        await page.unroute(session);
      }
      dropAborted(s.errors);
    });

    it('signs out', async () => {
      const { page } = s;
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('textbox', { name: 'API key' }).waitFor();
      await page.screenshot({ path: path.join(SCREENSHOTS, 'sign-in-1440.png') });
      expect(await seriousViolations(page)).toEqual([]);
      expect(await page.evaluate(() => fetch('../console/session').then((r) => r.status))).toBe(401);
      expect(s.errors.errors).toEqual([]);
    });
  });

  describe('a gateway that does not answer when the console opens', () => {
    it('says "Cannot reach the gateway" with Retry, not the sign-in; Retry finds the session (G430)', async () => {
      const { context, page, errors } = await signIn(ADMIN_KEY);
      const session = (u: URL): boolean => u.pathname === '/console/session';
      try {
        await page.route(session, (route) => route.abort('failed'));
        await page.goto(`${g.origin}/console/#/usage`);
        await page.reload();
        await page.getByRole('alert').filter({ hasText: 'Cannot reach the gateway' }).waitFor();
        await expect(page.getByRole('textbox', { name: 'API key' }).count()).resolves.toBe(0);
        await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('mediagate console');
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          expect(await seriousViolations(page), `at ${width} px`).toEqual([]);
          await page.screenshot({ path: path.join(SCREENSHOTS, `unreachable-at-open-${width}.png`) });
        }
        await page.unroute(session);
        await page.getByRole('button', { name: 'Retry' }).click();
        await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        dropAborted(errors);
        expect(errors.errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it('shows the sign-in for a 401, as before', async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${g.origin}/console/`);
        await page.getByRole('textbox', { name: 'API key' }).waitFor();
        await expect(page.getByRole('alert').count()).resolves.toBe(0);
        await expect(page.title()).resolves.toBe('mediagate console');
      } finally {
        await context.close();
      }
    });
  });

  describe('a session that ends while the page is open', () => {
    it('brings the sign-in back with "Your session has ended; sign in again."', async () => {
      const made = await newKey('ended mid-session');
      const s = await signIn(made.secret);
      try {
        const { page } = s;
        await expect(page.getByText('Your session has ended', { exact: false }).count()).resolves.toBe(0);
        const res = await fetch(`${g.origin}/admin/v1/keys/${made.id}/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          body: '{}',
        });
        expect(res.status).toBe(200);
        await page.getByRole('navigation').getByRole('link', { name: 'Tasks', exact: true }).click(); // its list gets a 401: the sign-in comes back
        await page.getByRole('textbox', { name: 'API key' }).waitFor();
        const said = page.getByRole('alert').filter({ hasText: 'Your session has ended; sign in again.' });
        await said.waitFor();
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: path.join(SCREENSHOTS, 'sign-in-session-ended-1440.png') });
        expect(s.errors.failedStatuses).toContain(401);
        // a sign-in of its own (a fresh page) says nothing of it
        await page.reload();
        await page.getByRole('textbox', { name: 'API key' }).waitFor();
        await expect(page.getByText('Your session has ended', { exact: false }).count()).resolves.toBe(0);
      } finally {
        await s.context.close();
      }
    });
  });

  describe('an admin rotating the key of its own session', () => {
    it('is warned first; then the new secret is shown with how to go on, not the sign-in; the new secret signs in', async () => {
      const made = await newKey('own session key', 'admin');
      const s = await signIn(made.secret);
      try {
        const { page } = s;
        await open(page, 'Keys');
        const refused = s.errors.failedStatuses.filter((st) => st === 401).length; // the sign-in page's own session check
        const row = page.getByRole('row', { name: /own session key/ });
        // revoking it is warned of too (and kept here)
        await row.getByRole('button', { name: 'Revoke' }).click();
        await page.getByRole('alertdialog').getByText('This is the key you are signed in with: revoking it ends this session.').waitFor();
        await page.getByRole('alertdialog').getByRole('button', { name: 'Keep the key' }).click();
        await row.getByRole('button', { name: 'Rotate', exact: true }).click();
        const dialog = page.getByRole('alertdialog');
        await dialog.getByText('This is the key you are signed in with', { exact: false }).waitFor();
        await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-keys-own-rotate-confirm-1440.png'), fullPage: true });
        await dialog.getByRole('button', { name: 'Rotate', exact: true }).click(); // no grace: the session ends at once
        const shown = page.locator('.secret');
        await shown.getByText('copy the new secret; then sign in again with it', { exact: false }).waitFor();
        const secret = (await shown.locator('code').textContent())!;
        expect(secret).toMatch(/^mg_/);
        expect(await statusWith(made.secret)).toBe(401);
        expect(await statusWith(secret)).toBe(200);
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-keys-own-rotated-1440.png'), fullPage: true });
        // still the page with the secret: no reload of the list, no drop to the sign-in
        await page.waitForLoadState('networkidle');
        await expect(page.getByRole('textbox', { name: 'API key' }).count()).resolves.toBe(0);
        expect(s.errors.failedStatuses.filter((st) => st === 401).length).toBe(refused);
        await shown.getByRole('button', { name: 'Sign in again' }).click();
        await page.getByRole('textbox', { name: 'API key' }).fill(secret);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        await page.getByText('own session key (admin)').waitFor();
        // rotated again with a grace period: the session lasts as long as the old secret, so it stays signed in
        await open(page, 'Keys');
        await row.getByRole('button', { name: 'Rotate', exact: true }).click();
        await dialog.getByRole('combobox', { name: 'Old secret still accepted for' }).selectOption({ label: '5 minutes' });
        await dialog.getByText('this session ends with the old secret; sign in again', { exact: false }).waitFor();
        await dialog.getByRole('button', { name: 'Rotate', exact: true }).click();
        await shown.getByText('which lasts as long as the old secret, until', { exact: false }).waitFor();
        const third = (await shown.locator('code').textContent())!;
        expect(third).not.toBe(secret);
        expect(await statusWith(secret)).toBe(200);
        expect(await statusWith(third)).toBe(200);
        await expect(shown.getByRole('button', { name: 'Sign in again' }).count()).resolves.toBe(0);
        await page.waitForLoadState('networkidle');
        await expect(page.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(true);
        expect(s.errors.failedStatuses.filter((st) => st === 401).length).toBe(refused); // no request of the page was refused
        expect(s.errors.errors).toEqual([]);
      } finally {
        await s.context.close();
      }
    });
  });
});
