import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { imageSize } from 'image-size';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mediagate } from '../../packages/client/src/index.js';
import { tempDir } from '../helpers/temp-root.js';
import { freePort, listeningGateway, type ListeningGateway } from '../helpers/listening-gateway.js';
import { BIN, ensureBuilt, ROOT, runCliAsync, runCollecting } from '../helpers/process.js';

// `mediagate generate` and `mediagate tasks` (G236-G239) as a user runs them: a child
// process talking over HTTP to a gateway listening on a port. Output is read as a pipe (plain
// lines) and in a pseudo-terminal made by util-linux `script` (the progress bar).
let g: ListeningGateway;
let idle: ListeningGateway; // no worker: tasks stay queued
let dir: string;
const env = (h: ListeningGateway = g): Record<string, string> => ({ MEDIAGATE_URL: h.origin, MEDIAGATE_API_KEY: h.key });
const cli = (args: string[], e: Record<string, string> = env()) => runCliAsync(args, e);

beforeAll(async () => {
  ensureBuilt();
  dir = tempDir('mediagate-cli-');
  [g, idle] = await Promise.all([listeningGateway({ env: { MEDIAGATE_SANDBOX_TIMING: 'fast' } }), listeningGateway({ workers: false })]);
}, 240_000);
afterAll(async () => {
  await Promise.all([g?.close(), idle?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('generate image|video, not on a terminal', () => {
  it('prints plain status lines, saves a real PNG to --out and exits 0', async () => {
    const out = path.join(dir, 'cat.png');
    const r = await cli(['generate', 'image', '--model', 'pic', '--prompt', 'a cat', '--size', '16:9', '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe(`saved to ${out}`);
    expect(lines.at(-2)).toBe('completed');
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^(queued|processing \d{1,3}%|completed)$/);
    expect(r.stdout).not.toContain('\r');
    const png = fs.readFileSync(out);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(imageSize(png)).toMatchObject({ type: 'png', width: 1024, height: 576 });
    expect(fs.existsSync(`${out}.part`)).toBe(false);
  });

  it('--json prints only the final task body; without --out the file is named after the task', async () => {
    const r = await runCliInDir(['generate', 'video', '--model', 'videos_fast', '--prompt', 'waves', '--duration', '4', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const task = JSON.parse(r.stdout) as { id: string; status: string; video_url: string };
    expect(task).toMatchObject({ status: 'completed', object: 'video', actualDuration: 4 });
    const file = path.join(dir, `${task.id}.mp4`);
    expect(fs.readFileSync(file).subarray(4, 8).toString()).toBe('ftyp'); // an MP4
  });

  it('--no-wait prints the task id; tasks get prints its body; tasks watch follows it to the end', async () => {
    const r = await cli(['generate', 'video', '--model', 'motion_2_0_4s_5s', '--prompt', 'a boat', '--duration', '4', '--no-audio', '--no-wait']);
    expect(r.status, r.stderr).toBe(0);
    const id = r.stdout.trim();
    expect(id).toMatch(/^task_/);
    const got = await cli(['tasks', 'get', id]);
    expect(JSON.parse(got.stdout)).toMatchObject({ id, model: 'motion_2_0_4s_5s' });
    const watched = await cli(['tasks', 'watch', id, '--json']);
    expect(watched.status, watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ id, status: 'completed' });
  });

  it('generate chat streams the reply; --json prints the envelope', async () => {
    const r = await cli(['generate', 'chat', '--model', 'chat-2.5-flash', '--prompt', 'Hello']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().length).toBeGreaterThan(0);
    const j = await cli(['generate', 'chat', '--model', 'chat-2.5-flash', '--prompt', 'Hello', '--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ code: '200', success: true });
  });
});

describe('exit codes', () => {
  it('1: the task failed (the body still printed with --json)', async () => {
    const r = await cli(['generate', 'image', '--model', 'pic', '--prompt', 'no [fail]', '--json']);
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'failed' });
    expect(r.stderr).toContain('[fail]');
  });

  it('2: usage errors, before anything is sent', async () => {
    const cases: string[][] = [
      ['generate', 'image', '--prompt', 'x'],
      ['generate', 'video', '--model', 'pic', '--prompt', 'x'],
      ['generate', 'image', '--model', 'pic', '--prompt', 'x', '--duration', '4'],
      ['generate', 'image', '--model', 'nope', '--prompt', 'x'],
      ['generate', 'image', '--model', 'pic', '--prompt', 'x', '--bogus'],
      ['generate', 'image', '--model', 'pic', '--prompt', 'x', '--no-wait', '--out', 'x.png'],
      ['tasks', 'frobnicate'],
    ];
    const results = await Promise.all(cases.map((args) => cli(args)));
    results.forEach((r, i) => {
      expect(r.status, cases[i]!.join(' ')).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(0);
    });
    const noUrl = await cli(['tasks', 'get', 'task_x'], { MEDIAGATE_URL: '', MEDIAGATE_API_KEY: 'k' });
    expect(noUrl.status).toBe(2);
    expect(noUrl.stderr).toContain('MEDIAGATE_URL');
    // a key no HTTP header can carry (two keys pasted on two lines): a usage error that never prints the key
    const twoLines = await cli(['tasks', 'get', 'task_x'], { MEDIAGATE_URL: g.origin, MEDIAGATE_API_KEY: 'mg_firstsecret\nmg_secondsecret' });
    expect(twoLines.status).toBe(2);
    expect(twoLines.stderr).toContain('MEDIAGATE_API_KEY');
    expect(twoLines.stderr + twoLines.stdout).not.toMatch(/firstsecret|secondsecret/);
    // a gateway URL with a password: fetch refuses it quoting the URL (exit 5); a usage error that never prints it (G459)
    const withPassword = await cli(['tasks', 'list'], { MEDIAGATE_URL: g.origin.replace('://', '://ops:hunter2@'), MEDIAGATE_API_KEY: g.key });
    expect(withPassword.status).toBe(2);
    expect(withPassword.stderr).toMatch(/^MEDIAGATE_URL \(or --url\) holds a user name or password/);
    expect(withPassword.stderr + withPassword.stdout).not.toContain('hunter2');
  });

  it('3: the task was cancelled; 6: --timeout passed', async () => {
    const client = new Mediagate({ baseUrl: idle.origin, apiKey: idle.key });
    const queued = await client.motion.create({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'x' }], duration: 4 });
    const timedOut = await cli(['tasks', 'watch', queued.id, '--timeout', '1'], env(idle));
    expect(timedOut.status, timedOut.stderr).toBe(6);
    expect(timedOut.stderr).toBe(`mediagate: --timeout 1 passed; the task goes on: mediagate tasks watch ${queued.id}\n`);
    const cancelled = await cli(['tasks', 'cancel', queued.id], env(idle));
    expect(cancelled.stdout.trim()).toBe(`cancelled ${queued.id}`);
    const r = await cli(['tasks', 'watch', queued.id], env(idle));
    expect(r.status).toBe(3);
  });

  it('4: the gateway refused the request (400, 404, 401), with its message', async () => {
    const bad = await cli(['generate', 'video', '--model', 'videos', '--prompt', 'x', '--duration', '99']);
    expect(bad.status).toBe(4);
    expect(bad.stderr).toContain('duration');
    expect((await cli(['tasks', 'get', 'task_unknown'])).status).toBe(4);
    expect((await cli(['tasks', 'get', 'task_unknown'], { MEDIAGATE_URL: g.origin, MEDIAGATE_API_KEY: 'mg_wrong' })).status).toBe(4);
  });

  it('5: the gateway cannot be reached', async () => {
    const port = await freePort();
    const r = await cli(['tasks', 'get', 'task_x'], { MEDIAGATE_URL: `http://127.0.0.1:${port}`, MEDIAGATE_API_KEY: 'k' });
    expect(r.status).toBe(5);
    // why, not only "fetch failed" (G485)
    expect(r.stderr).toMatch(new RegExp(`fetch failed \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)`));
  });

  it('5: a chat stream the upstream broke after it opened (an error event in a 200 stream), as a 5xx would be (G456)', async () => {
    const r = await cli(['generate', 'chat', '--model', 'chat-2.5-flash', '--prompt', 'go [fail-midway]']);
    expect(r.status, r.stderr).toBe(5);
    expect(r.stdout.length).toBeGreaterThan(0); // the text before the break
    expect(r.stderr).toMatch(/^mediagate: the chat stream ended with an error: upstream_error: .*\[fail-midway\]/);
    // an envelope error names its catalog code (x-error-code), as the standard body's do (G238)
    const refused = await cli(['generate', 'chat', '--model', 'chat-2.5-flash', '--prompt', 'x [fail]']);
    expect(refused.status).toBe(5);
    expect(refused.stderr).toMatch(/^mediagate: 502 upstream_error: /);
  });
});

describe('on a terminal', () => {
  it('draws a progress bar redrawn in place with a percent, clears it, then says where the result went', async () => {
    const out = path.join(dir, 'tty.png');
    const command = [process.execPath, BIN, 'generate', 'image', '--model', 'pic', '--prompt', 'tty', '--out', out].map((a) => `'${a}'`).join(' ');
    const r = await inPseudoTerminal(command, env());
    expect(r.status, r.output).toBe(0);
    const CLEAR_LINE = '\x1b[K';
    const redraws = r.output.split('\r').filter((part) => part.endsWith(CLEAR_LINE) && /^\w+ +\[[#.]+\] +\d{1,3}%$/.test(part.slice(0, -CLEAR_LINE.length)));
    expect(redraws.length).toBeGreaterThanOrEqual(2);
    expect(redraws.at(-1)).toMatch(/^completed +\[#+\] 100%/);
    expect(r.output).toContain(`\r\x1b[Kcompleted: saved to ${out}`);
    expect(imageSize(fs.readFileSync(out)).type).toBe('png');
  });
});

describe('tasks list (needs GET /v1/tasks)', () => {
  it("lists the caller's tasks newest first", async () => {
    const h = await listeningGateway();
    try {
      const client = new Mediagate({ baseUrl: h.origin, apiKey: h.key });
      const a = await client.pic.create({ model: 'pic', prompt: 'a' });
      const b = await client.pic.create({ model: 'pic', prompt: 'b' });
      const r = await cli(['tasks', 'list', '--family', 'pic'], env(h));
      expect(r.status, r.stderr).toBe(0);
      expect(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => l.split('\t')[0]),
      ).toEqual([b.id, a.id]);
      const all = await cli(['tasks', 'list', '--all', '--limit', '1', '--json'], env(h));
      expect(
        all.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { id: string }).id),
      ).toEqual([b.id, a.id]);
    } finally {
      await h.close();
    }
  });
});

describe('a hostile gateway', () => {
  it('a task id or result URL naming another folder never places the default output file outside the working folder', async () => {
    const work = path.join(dir, 'work');
    fs.mkdirSync(work, { recursive: true });
    const id = '../escaped';
    const server = http.createServer((req, res) => {
      const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const task = {
        id,
        object: 'image',
        created: 1,
        model: 'pic',
        status: 'completed',
        progress: 100,
        error: null,
        image_url: `${origin}/files/..%2F..%2Fdeep`,
      };
      if (req.url?.startsWith('/files/')) {
        res.end('not really an image');
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ...task, ...(req.method === 'POST' && { status: 'queued', progress: 0, image_url: null }) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const r = await runCollecting(
        process.execPath,
        [BIN, 'generate', 'image', '--model', 'pic', '--prompt', 'x'],
        { MEDIAGATE_URL: origin, MEDIAGATE_API_KEY: 'mg_k' },
        work,
      );
      expect(r.status, r.stderr).toBe(0);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('escaped'))).toEqual([]);
      expect(fs.readdirSync(work)).toHaveLength(1); // saved here, under a plain name
    } finally {
      server.close();
    }
  });
});

/** The CLI run with `dir` as its working folder (default output names land there). */
function runCliInDir(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return runCollecting(process.execPath, [BIN, ...args], env(), dir).then((r) => ({ status: r.status, stdout: r.stdout, stderr: r.stderr }));
}

/** Runs `command` in a pseudo-terminal (util-linux `script`); everything it wrote, as the terminal got it. */
async function inPseudoTerminal(command: string, e: Record<string, string>): Promise<{ status: number | null; output: string }> {
  const r = await runCollecting('script', ['-qfec', command, '/dev/null'], e, ROOT);
  return { status: r.status, output: r.stdout };
}
