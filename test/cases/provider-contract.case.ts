/**
 * The rules ANY provider adapter (src/providers/types.ts) must follow, whatever it generates with:
 * it stops with the abort reason when its signal aborts, reports progress within 0-100 and never
 * backwards, lets an unrecoverable failure surface as an UnrecoverableError, writes nothing outside
 * `ctx.workDir`, and declares of each file what its bytes really are (content type, pixel size,
 * duration). Provider-specific checks (exact sizes, codecs, markers) live in each provider's test
 * file beside the call to `runProviderContract`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FamilyId } from '../../src/contract/families.js';
import { familyRequestOf } from '../../src/contract/family-request.js';
import { mediaRefs } from '../../src/contract/media-refs.js';
import type { OutputSpec } from '../../src/contract/output.js';
import { createLogger } from '../../src/logger.js';
import {
  UnrecoverableError,
  type MediaProvider,
  type ProducedFile,
  type ProviderContext,
  type ProviderJob,
  type ProviderOutput,
} from '../../src/providers/types.js';
import { snapshotTree, treeChanges } from '../helpers/fs-snapshot.js';
import { imageFacts, sniffContentType, timedFacts } from '../helpers/media-facts.js';

export interface ProviderContractOptions {
  make: () => MediaProvider;
  /**
   * Jobs the provider must complete (at least one per kind of output it makes); every file made is
   * checked. A job's own `make` builds its provider instead of the suite's (another configuration
   * of the same provider, such as the sandbox at another timing).
   */
  jobs: ReadonlyArray<{ name: string; job: () => ProviderJob; make?: () => MediaProvider }>;
  /**
   * A job that runs long enough (a few hundred ms at least) to be aborted while it runs. For a
   * provider that starts generations elsewhere: one whose call to the upstream is still in flight
   * (held there: it never ends by itself). So a provider that ignored an abort would finish the job
   * (an output where the tests expect none) or not end before the test's timeout: the abort tests
   * show "promptly" by that, not by a bound on the time (G476).
   */
  longJob: () => ProviderJob;
  /** A job that must fail for good (a refused prompt or medium): it must end as an UnrecoverableError. */
  unrecoverableJob: () => ProviderJob;
  /** Folders the provider must leave alone besides the suite's own ones (a configured data dir, ...). */
  watchDirs?: readonly string[];
  /** A media reader and media URLs for the context, when the provider needs them. */
  context?: Partial<Pick<ProviderContext, 'readMedia' | 'mediaUrl'>>;
  /** Pause between checks of a generation started at an upstream, ms (default 20). */
  checkEveryMs?: number;
}

/** A job as read back from a stored task of `family` whose parameters are `params`, as given. */
export function jobFor(output: OutputSpec, params: Record<string, unknown> = { prompt: 'contract' }, family: FamilyId = 'pic', attempt = 1): ProviderJob {
  return {
    ...familyRequestOf(family, null, params),
    taskId: `task_contract_${Math.random().toString(36).slice(2)}`,
    model: family,
    upstreamModel: family,
    output,
    media: mediaRefs(),
    attempt,
    generation: 0,
  };
}

/** The bytes of a produced file: in memory, in the work folder, or at the upstream (fetched with its headers). */
export async function bytesOf(file: ProducedFile): Promise<Buffer> {
  if ('url' in file) {
    const res = await fetch(file.url, { headers: file.headers ?? {} });
    if (!res.ok) throw new Error(`fetching ${file.url}: HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }
  return 'data' in file ? file.data : fs.promises.readFile(file.path);
}

/**
 * What the task runner does with a provider, in one place: start, then (for a generation started
 * at an upstream) check every `checkEveryMs` until it ends, reporting the upstream's progress.
 * Resolves with the output; rejects with the error of a failed generation or of a call.
 */
export async function runToOutput(provider: MediaProvider, job: ProviderJob, ctx: ProviderContext, checkEveryMs = 20): Promise<ProviderOutput> {
  const started = await provider.start(job, ctx);
  if (started.state === 'done') return started.output;
  if (started.progress !== undefined) ctx.reportProgress(started.progress);
  for (;;) {
    ctx.signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, checkEveryMs));
    ctx.signal.throwIfAborted();
    const checked = await provider.check!(started.ref, job, ctx);
    if (checked.state === 'completed') return checked.output;
    if (checked.state === 'failed') throw checked.error;
    if (checked.progress !== undefined) ctx.reportProgress(checked.progress);
  }
}

/** Folders under the working directory other processes of the test run may write to (builds). */
const CWD_SKIP = ['node_modules', '.git', 'dist', 'coverage', '.vitest-tmp'].map((p) => path.resolve(p));

interface Run {
  out?: ProviderOutput;
  error?: unknown;
  progress: number[];
  workDir: string;
  /** Files created, changed or removed outside workDir while the provider ran. */
  changes: string[];
}

interface Abort {
  controller: AbortController;
  reason?: unknown;
  /** When the abort comes: from a timer after the first progress report (default), before submit, or inside reportProgress itself. */
  when?: 'timer' | 'before' | 'in-report';
}

/**
 * Runs one job with a private workDir and TMPDIR inside a fresh folder, aborting it (when asked) just
 * after its first progress report or after 150 ms, whichever comes first; snapshots that folder, the
 * working directory (where `./data` lives) and `watchDirs` before and after.
 */
async function isolatedRun(options: ProviderContractOptions, job: ProviderJob, abort?: Abort, make = options.make): Promise<Run> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-contract-'));
  const tmp = path.join(root, 'tmp');
  const workDir = path.join(root, 'work');
  fs.mkdirSync(tmp);
  fs.mkdirSync(workDir);
  const watched = [root, process.cwd(), ...(options.watchDirs ?? [])];
  const before = snapshotTree(watched, [workDir, ...CWD_SKIP]);
  const run: Run = { progress: [], workDir, changes: [] };
  let fired = false;
  const fire = (): void => {
    if (!abort || fired) return;
    fired = true;
    if (abort.reason === undefined) abort.controller.abort();
    else abort.controller.abort(abort.reason);
  };
  const ctx: ProviderContext = {
    signal: abort?.controller.signal ?? new AbortController().signal,
    log: createLogger('silent'),
    workDir,
    // the abort arrives from a timer, as the task runner's do (cancel, lease loss, attempt timeout)
    reportProgress: (p) => {
      run.progress.push(p);
      if (abort?.when === 'in-report') fire();
      else if (abort) setTimeout(fire, 0);
    },
    readMedia: async () => {
      throw new Error('no caller media in the provider contract suite');
    },
    mediaUrl: (ref) => ref.url,
    ...options.context,
  };
  const savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  if (abort?.when === 'before') fire();
  const timer = abort ? setTimeout(fire, 150) : undefined;
  try {
    run.out = await runToOutput(make(), job, ctx, options.checkEveryMs);
  } catch (err) {
    run.error = err;
  } finally {
    clearTimeout(timer);
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  }
  run.changes = treeChanges(before, snapshotTree(watched, [workDir, ...CWD_SKIP]));
  return run;
}

const inside = (dir: string, file: string): boolean => {
  const rel = path.relative(dir, path.resolve(file));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
};

function expectMonotonicProgress(progress: readonly number[]): void {
  for (const p of progress) {
    expect(Number.isFinite(p)).toBe(true);
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThanOrEqual(100);
  }
  for (let i = 1; i < progress.length; i++) expect(progress[i]!, `progress ${progress.join(', ')}`).toBeGreaterThanOrEqual(progress[i - 1]!);
}

/** The declared facts of a produced file against its bytes. */
async function expectTruthfulFile(produced: ProducedFile, workDir: string): Promise<{ duration?: number }> {
  const bytes = await bytesOf(produced);
  if ('url' in produced) {
    // a file at the upstream: the gateway downloads and probes it, so only its kind is declared
    const sniffed = sniffContentType(bytes);
    expect(sniffed?.split('/')[0], `${produced.url} is the ${produced.kind} it is declared to be`).toBe(produced.kind);
    return sniffed!.startsWith('image/') ? {} : { duration: timedFacts(bytes).durationSec };
  }
  const file = produced;
  expect(file.name).toMatch(/^(?!\.\.?$)[^/\\]+$/); // a plain file name inside the task's result folder
  if ('path' in file) expect(inside(workDir, file.path), `${file.path} is inside ${workDir}`).toBe(true);
  expect(bytes.length).toBeGreaterThan(0);
  const sniffed = sniffContentType(bytes);
  expect(sniffed, `the bytes of ${file.name} are a known media type`).toBeDefined();
  expect(file.contentType).toBe(sniffed);
  if (sniffed!.startsWith('image/')) {
    const facts = await imageFacts(bytes);
    if (file.width !== undefined) expect(facts.width).toBe(file.width);
    if (file.height !== undefined) expect(facts.height).toBe(file.height);
    expect(file.duration).toBeUndefined();
    return {};
  }
  const facts = timedFacts(bytes);
  if (file.width !== undefined) expect(facts.video?.width).toBe(file.width);
  if (file.height !== undefined) expect(facts.video?.height).toBe(file.height);
  if (file.duration !== undefined) expect(Math.abs(facts.durationSec - file.duration)).toBeLessThanOrEqual(0.1);
  return { duration: facts.durationSec };
}

/** What every provider adapter must do; run it from each provider's test file. */
export function runProviderContract(name: string, options: ProviderContractOptions): void {
  describe(`provider contract: ${name}`, () => {
    it.each(options.jobs.map((j) => ({ ...j })))(
      '$name: completes with truthful files, monotonic progress, nothing written outside workDir',
      async ({ job, make }) => {
        const run = await isolatedRun(options, job(), undefined, make);
        if (run.error) throw run.error;
        expect(run.out!.files.length).toBeGreaterThan(0);
        const durations: number[] = [];
        for (const file of run.out!.files) {
          const { duration } = await expectTruthfulFile(file, run.workDir);
          if (duration !== undefined) durations.push(duration);
        }
        if (run.out!.actualDuration !== undefined) {
          expect(durations.length, 'actualDuration comes with a timed file').toBeGreaterThan(0);
          expect(Math.abs(durations[0]! - run.out!.actualDuration)).toBeLessThanOrEqual(0.1);
        }
        expectMonotonicProgress(run.progress);
        expect(run.changes).toEqual([]);
      },
    );

    it("an abort while it runs: rejects with the signal's reason, promptly, writing nothing outside workDir", async () => {
      const reason = new Error('provider contract: stop');
      const run = await isolatedRun(options, options.longJob(), { controller: new AbortController(), reason });
      expect(run.out, 'the long job was aborted before it finished').toBeUndefined();
      expect(run.error).toBe(reason);
      expectMonotonicProgress(run.progress);
      expect(run.changes).toEqual([]);
    });

    it('a signal aborted before submit: rejects with its reason at once, reporting no progress and making nothing', async () => {
      const reason = new Error('provider contract: aborted before it began');
      const run = await isolatedRun(options, options.longJob(), { controller: new AbortController(), reason, when: 'before' });
      expect(run.out).toBeUndefined();
      expect(run.error).toBe(reason);
      expect(run.progress).toEqual([]);
      expect(run.changes).toEqual([]);
    });

    it('an abort that arrives inside reportProgress stops it, with that reason', async () => {
      const reason = new Error('provider contract: stopped from a progress report');
      const run = await isolatedRun(options, options.longJob(), { controller: new AbortController(), reason, when: 'in-report' });
      expect(run.out).toBeUndefined();
      expect(run.error).toBe(reason);
    });

    it.each(['cancelled', 'lease-lost', 'shutdown', 'attempt-timeout'])(
      'an abort whose reason is not an Error (%s, as the runner gives) rejects with exactly that reason',
      async (reason) => {
        const run = await isolatedRun(options, options.longJob(), { controller: new AbortController(), reason });
        expect(run.out).toBeUndefined();
        expect(run.error).toBe(reason);
      },
    );

    it('an abort without a reason: rejects with an AbortError', async () => {
      const run = await isolatedRun(options, options.longJob(), { controller: new AbortController() });
      expect(run.out).toBeUndefined();
      expect(run.error).toMatchObject({ name: 'AbortError' });
    });

    it('an unrecoverable failure ends as an UnrecoverableError, writing nothing outside workDir', async () => {
      const run = await isolatedRun(options, options.unrecoverableJob());
      expect(run.out).toBeUndefined();
      expect(run.error).toBeInstanceOf(UnrecoverableError);
      expect((run.error as Error).message).not.toBe('');
      expectMonotonicProgress(run.progress);
      expect(run.changes).toEqual([]);
    });
  });
}
