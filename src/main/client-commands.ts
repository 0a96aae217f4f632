import { Mediagate, TimeoutError, type AnyTask, type ChatModel } from '../../packages/client/dist/index.js';
import { asksForHelp, parse, UsageError, urlExtras } from './cli-args.js';
import { download, EXIT, progressFor, reportError, resultUrlOf } from './client-output.js';
import { bodyFor, familyOf, FIELD_FLAGS } from './generate-body.js';

/** The client commands (G236-G239): they talk to a running gateway through the SDK. */
export const CLIENT_USAGE = `  generate image|video --model M --prompt P [--out FILE] [--wait|--no-wait] [--json] [--timeout S]
           [--size S] [--resolution R] [--aspect-ratio A] [--ratio A] [--duration N] [--image URL]...
           [--first-image URL] [--last-image URL] [--audio|--no-audio] [--callback-url URL]
                                submit a task to the gateway at MEDIAGATE_URL (key MEDIAGATE_API_KEY; or
                                --url, --api-key), follow it with a progress bar and save the result to
                                --out (default <task id>.<ext>); --json prints only the final task body
  generate chat --model M --prompt P [--system S] [--json]
                                print a chat reply as it streams (--json: the whole reply envelope)
  tasks list [--status S] [--family F] [--model M] [--created-after UNIX] [--limit N] [--cursor C] [--all] [--json]
  tasks get ID | tasks cancel ID [--json] | tasks watch ID [--out FILE] [--json] [--timeout S]
                                the caller's tasks: list (newest first), get, cancel (motion), follow to the end
  Exit codes: 0 done, 1 task failed, 2 usage error, 3 task cancelled, 4 request refused (4xx),
              5 gateway or network failure (5xx, unreachable), 6 --timeout passed,
              7 the API key has expired, 8 the key may not use this model (or is an admin key)`;

const CONNECTION = { url: { type: 'string' }, 'api-key': { type: 'string' }, json: { type: 'boolean' } } as const;

/** Long-poll wait of the client commands: progress is redrawn at least this often (G237). */
const POLL_MS = 2_000;

function connect(values: { url?: string | undefined; 'api-key'?: string | undefined }): Mediagate {
  const baseUrl = values.url ?? process.env.MEDIAGATE_URL;
  const apiKey = values['api-key'] ?? process.env.MEDIAGATE_API_KEY;
  if (!baseUrl) throw new UsageError("set MEDIAGATE_URL (or --url) to the gateway's address, e.g. http://127.0.0.1:8790");
  if (!/^https?:\/\/[^/]/.test(baseUrl)) throw new UsageError(`the gateway address must be an http(s) URL, got "${baseUrl}"`);
  for (const [name, url] of [
    ['MEDIAGATE_URL (or --url)', baseUrl],
    ['MEDIAGATE_POWER_URL', process.env.MEDIAGATE_POWER_URL],
    ['MEDIAGATE_API_URL', process.env.MEDIAGATE_API_URL],
  ] as const) {
    const extras = url ? urlExtras(url) : undefined;
    if (extras) throw new UsageError(`${name} holds ${extras}, which no request may carry; set the gateway's URL without them`);
  }
  if (!apiKey) throw new UsageError('set MEDIAGATE_API_KEY (or --api-key) to an API key of the gateway (mediagate keys create)');
  // never echoed: fetch's own error would print the whole header, the key in it
  if (!/^[\x21-\x7e]+$/.test(apiKey.trim()))
    throw new UsageError('MEDIAGATE_API_KEY (or --api-key) holds spaces, line breaks or other characters no API key has: set it to one key');
  const power = process.env.MEDIAGATE_POWER_URL;
  const api = process.env.MEDIAGATE_API_URL;
  return new Mediagate({ baseUrl, apiKey, ...(power && { powerBaseUrl: power }), ...(api && { apiBaseUrl: api }) });
}

function timeoutOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]{0,6}$/.test(raw)) throw new UsageError(`--timeout must be a whole number of seconds above 0, got "${raw}"`);
  return Number(raw) * 1000;
}

function whole(flag: string, raw: string): number {
  if (!/^[0-9]{1,12}$/.test(raw)) throw new UsageError(`${flag} must be a whole number, got "${raw}"`);
  return Number(raw);
}

const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

/** Follows a task to its end with progress, then saves its result when `save` (always for generate, with --out for watch). */
async function follow(
  client: Mediagate,
  id: string,
  o: { json: boolean; out: string | undefined; save: boolean; timeoutMs: number | undefined },
): Promise<number> {
  const progress = progressFor(process.stdout, o.json);
  // Ctrl-C leaves no half-drawn bar behind (the task goes on at the gateway: tasks watch ID resumes).
  const interrupted = (): void => {
    progress.end();
    process.stderr.write(`interrupted; the task goes on: mediagate tasks watch ${id}\n`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  let task: AnyTask;
  const started = Date.now();
  try {
    task = await client.tasks.waitFor(id, {
      pollIntervalMs: POLL_MS,
      onProgress: (t) => progress.update(t),
      ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }),
    });
  } catch (err) {
    // as for Ctrl-C: the task goes on at the gateway, and the way back to it is named
    if (err instanceof TimeoutError && o.timeoutMs !== undefined && Date.now() - started >= o.timeoutMs)
      throw new TimeoutError(`--timeout ${o.timeoutMs / 1000} passed; the task goes on: mediagate tasks watch ${id}`);
    throw err;
  } finally {
    process.removeListener('SIGINT', interrupted);
    progress.end();
  }
  const url = resultUrlOf(task);
  const file = o.save && url ? await download(url, id, o.out) : undefined;
  if (o.json) printJson(task);
  else {
    const what = file ? `saved to ${file}` : (url ?? '');
    process.stdout.write(progress.plain ? (what ? `${what}\n` : '') : `completed${what ? `: ${what}` : ''}\n`);
  }
  return EXIT.ok;
}

async function generateMedia(kind: 'image' | 'video', args: string[]): Promise<number> {
  const { values } = parse(
    args,
    {
      ...CONNECTION,
      ...FIELD_FLAGS,
      model: { type: 'string' },
      prompt: { type: 'string' },
      out: { type: 'string' },
      wait: { type: 'boolean' },
      'no-wait': { type: 'boolean' },
      timeout: { type: 'string' },
      'callback-url': { type: 'string' },
    },
    0,
  );
  const { json = false, model, prompt, out, wait, 'no-wait': noWait, timeout, 'callback-url': callbackUrl } = values;
  if (!model) throw new UsageError(`generate ${kind} needs --model M`);
  if (!prompt) throw new UsageError(`generate ${kind} needs --prompt P`);
  if (wait && noWait) throw new UsageError('--wait and --no-wait exclude each other');
  if (noWait && (out !== undefined || timeout !== undefined)) throw new UsageError('--out and --timeout apply while waiting; drop them or --no-wait');
  const timeoutMs = timeoutOf(timeout);
  const family = familyOf(kind, model);
  const fields = Object.fromEntries(Object.keys(FIELD_FLAGS).map((flag) => [flag, values[flag as keyof typeof FIELD_FLAGS]]));
  const body = { ...bodyFor(family, model, prompt, fields), ...(callbackUrl !== undefined && { callback_url: callbackUrl }) };
  const client = connect(values);
  const created = await createTask(client, family, body);
  if (noWait) {
    if (json) printJson(created.reply);
    else process.stdout.write(`${created.id}\n`);
    return EXIT.ok;
  }
  if (!json) process.stderr.write(`task ${created.id}\n`);
  return follow(client, created.id, { json, out, save: true, timeoutMs });
}

async function createTask(client: Mediagate, family: ReturnType<typeof familyOf>, body: Record<string, unknown>): Promise<{ id: string; reply: unknown }> {
  const as = <T>(b: Record<string, unknown>): T => b as T;
  switch (family) {
    case 'pic': {
      const r = await client.pic.create(as(body));
      return { id: r.id, reply: r };
    }
    case 'clip': {
      const r = await client.clip.create(as(body));
      return { id: r.id, reply: r };
    }
    case 'reel': {
      const r = await client.reel.create(as(body));
      return { id: r.id, reply: r };
    }
    case 'motion': {
      const r = await client.motion.create(as(body));
      return { id: r.id, reply: r };
    }
    case 'videos': {
      const r = await client.videos.create(as(body));
      return { id: r.data.projectId, reply: r };
    }
    case 'model-center': {
      const r = await client.modelCenter.create(as(body));
      return { id: r.id, reply: r };
    }
  }
}

async function generateChat(args: string[]): Promise<number> {
  const { values } = parse(args, { ...CONNECTION, model: { type: 'string' }, prompt: { type: 'string' }, system: { type: 'string' } }, 0);
  if (!values.model) throw new UsageError('generate chat needs --model M');
  if (!values.prompt) throw new UsageError('generate chat needs --prompt P');
  const client = connect(values);
  const messages = [...(values.system ? [{ role: 'system' as const, content: values.system }] : []), { role: 'user' as const, content: values.prompt }];
  const params = { model: values.model as ChatModel, messages };
  if (values.json) {
    printJson(await client.chat.create(params));
    return EXIT.ok;
  }
  for await (const chunk of client.chat.stream(params)) process.stdout.write(chunk.choices[0]?.delta.content ?? '');
  process.stdout.write('\n');
  return EXIT.ok;
}

async function tasksCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'list': {
      const { values } = parse(
        rest,
        {
          ...CONNECTION,
          status: { type: 'string' },
          family: { type: 'string' },
          model: { type: 'string' },
          'created-after': { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
          all: { type: 'boolean' },
        },
        0,
      );
      if (values.all && values.cursor) throw new UsageError('--all starts at the newest task; it takes no --cursor');
      const client = connect(values);
      const params = {
        ...(values.status && { status: values.status as AnyTask['status'] }),
        ...(values.family && { family: values.family as 'pic' }),
        ...(values.model && { model: values.model }),
        ...(values['created-after'] !== undefined && { created_after: whole('--created-after', values['created-after']) }),
        ...(values.limit !== undefined && { limit: whole('--limit', values.limit) }),
      };
      const show = (t: AnyTask): void => {
        if (values.json) printJson(t);
        else process.stdout.write(`${t.id}\t${t.status}\t${t.progress}%\t${t.model}\t${new Date(t.created * 1000).toISOString()}\n`);
      };
      if (values.all) {
        for await (const t of client.tasks.iterate(params)) show(t);
        return EXIT.ok;
      }
      const page = await client.tasks.list({ ...params, ...(values.cursor && { cursor: values.cursor }) });
      if (values.json) {
        printJson(page);
        return EXIT.ok;
      }
      for (const t of page.data) show(t);
      if (page.has_more) process.stderr.write(`more: --cursor ${page.next_cursor}\n`);
      return EXIT.ok;
    }
    case 'get':
    case 'cancel':
    case 'watch': {
      const {
        values,
        positionals: [id],
      } = parse(rest, { ...CONNECTION, out: { type: 'string' }, timeout: { type: 'string' } }, 1);
      if (!id) throw new UsageError(`tasks ${sub} needs a task ID`);
      if (sub !== 'watch' && (values.out !== undefined || values.timeout !== undefined))
        throw new UsageError(`--out and --timeout belong to tasks watch, not tasks ${sub}`);
      const client = connect(values);
      if (sub === 'watch')
        return follow(client, id, { json: values.json ?? false, out: values.out, save: values.out !== undefined, timeoutMs: timeoutOf(values.timeout) });
      const task = sub === 'get' ? await client.tasks.get(id) : await client.motion.cancel(id);
      if (values.json || sub === 'get') printJson(task);
      else process.stdout.write(`${task.status} ${task.id}\n`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(`Usage: mediagate tasks list|get|cancel|watch ...\n${CLIENT_USAGE}`);
  }
}

/** `mediagate generate ...` and `mediagate tasks ...`: answers the exit code (G238). */
export async function clientCommand(command: 'generate' | 'tasks', args: string[]): Promise<number> {
  if (asksForHelp(args)) {
    process.stdout.write(`Usage: mediagate generate|tasks ...\n${CLIENT_USAGE}\n`);
    return EXIT.ok;
  }
  const json = args.includes('--json');
  try {
    if (command === 'tasks') return await tasksCommand(args);
    const [kind, ...rest] = args;
    if (kind === 'image' || kind === 'video') return await generateMedia(kind, rest);
    if (kind === 'chat') return await generateChat(rest);
    throw new UsageError(`Usage: mediagate generate image|video|chat ...\n${CLIENT_USAGE}`);
  } catch (err) {
    return reportError(err, json);
  }
}
