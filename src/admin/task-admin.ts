/**
 * Every tenant's tasks for the admin API (G317-G320): the list, one task with what only an
 * operator may see (its key and account, the request as accepted, each attempt, its upstream, its
 * hold, its webhook deliveries, its timeline), and the operator's cancel, audited (G325).
 */
import type { AdminTask, AdminTaskAttempt, AdminTaskDetail, AdminTaskEvent, AdminTaskList, TaskListAdminQuerystring } from '../contract/admin-tasks.js';
import { toCredits } from '../credits/money.js';
import { AppError } from '../errors.js';
import type { ReplyContext } from '../families/reply-context.js';
import { queryReply } from '../families/query-reply.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { AdminStore, AuditStore, KeyStore, LedgerEntry, TaskEvent, TaskRecord } from '../store/types.js';
import type { WebhookStore } from '../store/webhook-types.js';
import type { TaskService } from '../tasks/service.js';
import { parseTimeParam } from '../tasks/task-list.js';
import { auditEntry, type Actor } from './actor.js';
import { decodeCursor, filtersDigest, pageOf, parseLimit } from './paging.js';

export interface TaskAdminDeps {
  admin: AdminStore;
  tasks: TaskService;
  keys: Pick<KeyStore, 'get'>;
  webhooks: Pick<WebhookStore, 'listForTask'>;
  audit: AuditStore;
  providers: ProviderRegistry;
  /** The type of each provider id (relay, fal, ...), where known. */
  typeOf(provider: string): string | null;
  links: ReplyContext;
  now?: () => number;
}

const seconds = (ms: number): number => Math.floor(ms / 1000);
const secondsOrNull = (ms: number | null | undefined): number | null => (ms == null ? null : seconds(ms));

export function adminTaskReply(t: TaskRecord, accountId: string | null): AdminTask {
  return {
    id: t.id,
    object: 'admin_task',
    key_id: t.ownerKeyId,
    account_id: accountId,
    family: t.family,
    form: t.form,
    model: t.model,
    provider: t.provider,
    status: t.status,
    progress: t.progress,
    attempt_count: t.attempts,
    error: t.error,
    credits: t.amount,
    created: seconds(t.createdAt),
    started: secondsOrNull(t.startedAt),
    finished: secondsOrNull(t.finishedAt),
  };
}

/** The submit, then each status change. */
function timelineOf(task: TaskRecord, events: readonly TaskEvent[]): AdminTaskEvent[] {
  const submit: AdminTaskEvent = {
    at: seconds(task.createdAt),
    at_ms: task.createdAt,
    from: null,
    status: 'queued',
    attempt: 0,
    provider: events[0]?.provider ?? task.provider,
    error: null,
  };
  return [
    submit,
    ...events.map((e) => ({ at: seconds(e.at), at_ms: e.at, from: e.from, status: e.status, attempt: e.attempt, provider: e.provider, error: e.error })),
  ];
}

/** Attempts from the timeline: each start (to processing) until the next change. */
export function attemptsOf(events: readonly TaskEvent[]): AdminTaskAttempt[] {
  const out: AdminTaskAttempt[] = [];
  let open: AdminTaskAttempt | undefined;
  for (const e of events) {
    if (open) {
      open.ended = seconds(e.at);
      open.outcome = e.status === 'queued' || e.status === 'processing' ? 'requeued' : e.status;
      open.error = e.status === 'completed' ? null : e.error;
      open = undefined;
    }
    if (e.status === 'processing') {
      open = { attempt: e.attempt, provider: e.provider, started: seconds(e.at), ended: null, outcome: null, error: null };
      out.push(open);
    }
  }
  return out;
}

function ledgerReply(e: LedgerEntry): { kind: 'hold' | 'capture' | 'release'; amount: number; created: number } {
  return { kind: e.kind as 'hold' | 'capture' | 'release', amount: toCredits(e.amountMicro), created: seconds(e.createdAt) };
}

export class TaskAdmin {
  private readonly now: () => number;

  constructor(private readonly deps: TaskAdminDeps) {
    this.now = deps.now ?? Date.now;
  }

  async list(query: TaskListAdminQuerystring): Promise<AdminTaskList> {
    const limit = parseLimit(query.limit);
    const filters = {
      ...(query.key_id !== undefined && { keyId: query.key_id }),
      ...(query.account_id !== undefined && { accountId: query.account_id }),
      ...(query.family !== undefined && { family: query.family }),
      ...(query.model !== undefined && { model: query.model }),
      ...(query.status !== undefined && { status: query.status }),
      ...(query.provider !== undefined && { provider: query.provider }),
      ...(query.created_after !== undefined && { createdAfter: parseTimeParam('created_after', query.created_after) }),
      ...(query.created_before !== undefined && { createdBefore: parseTimeParam('created_before', query.created_before) }),
    };
    const digest = filtersDigest(['tasks', filters]);
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, digest, ['n', 's']);
    const rows = await this.deps.admin.listTasks({
      ...filters,
      ...(before && { before: { createdAt: before[0] as number, id: before[1] as string } }),
      limit: limit + 1,
    });
    const page = pageOf(rows, limit, (t) => [t.createdAt, t.id], digest);
    const accounts = await this.accountsOf(page.items);
    return {
      object: 'list',
      data: page.items.map((t) => adminTaskReply(t, accounts.get(t.ownerKeyId) ?? null)),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  async get(id: string): Promise<AdminTaskDetail> {
    const task = await this.task(id);
    const [events, ledger, deliveries, accounts] = await Promise.all([
      this.deps.admin.taskEvents(id),
      this.deps.admin.taskLedger(id),
      this.deps.webhooks.listForTask(id),
      this.accountsOf([task]),
    ]);
    const hold = ledger.find((e) => e.kind === 'hold');
    const settlement = ledger.find((e) => e.kind === 'capture' || e.kind === 'release');
    const ref = task.upstream?.ref;
    return {
      ...adminTaskReply(task, accounts.get(task.ownerKeyId) ?? null),
      view: queryReply(task, this.deps.links),
      cancellable: (task.status === 'queued' || task.status === 'processing') && this.cancelRefusal(task) === undefined,
      request: JSON.parse(JSON.stringify(task.request)) as Record<string, unknown>,
      upstream:
        task.upstream === null
          ? null
          : {
              provider_type: this.deps.typeOf(task.upstream.provider ?? task.provider),
              channel: task.upstream.provider ?? task.provider,
              task_id: ref?.id ?? null,
              generation: task.upstream.generation,
            },
      attempts: attemptsOf(events),
      hold: hold === undefined ? null : { amount: toCredits(hold.amountMicro), settlement: settlement === undefined ? null : ledgerReply(settlement) },
      ledger: ledger.map(ledgerReply),
      webhooks: deliveries.map((d) => ({
        id: d.id,
        url: d.url,
        status: d.status,
        attempts: d.attempts.map((a) => ({ at: seconds(a.at), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs })),
        next_attempt_at: secondsOrNull(d.nextAttemptAt),
        created: seconds(d.createdAt),
      })),
      timeline: timelineOf(task, events),
    };
  }

  /**
   * Cancels a queued or processing task of any tenant. A processing task is cancelled only where its
   * provider can stop a generation (a queued one always: nothing runs yet); otherwise, and for a
   * finished task, a 409. Audited when it cancelled the task (G325).
   */
  async cancel(id: string, actor: Actor): Promise<AdminTaskDetail> {
    const { task, cancelled } = await this.deps.tasks.cancelAnyTask(id, (t) => this.cancelRefusal(t));
    if (cancelled)
      await this.deps.audit.append(
        auditEntry(actor, 'task.cancel', task.id, { key_id: task.ownerKeyId, provider: task.provider, model: task.model }, this.now()),
      );
    return this.get(task.id);
  }

  /** Why the operator may not cancel an unfinished task (G319): a generation its provider cannot stop; undefined: it may. */
  private cancelRefusal(t: TaskRecord): string | undefined {
    if (t.status !== 'processing') return undefined;
    const provider = this.deps.providers.get(t.provider);
    return provider?.cancel ? undefined : `Task ${t.id} is processing at ${t.provider}, which cannot stop a generation; it ends on its own`;
  }

  private async task(id: string): Promise<TaskRecord> {
    const task = await this.deps.tasks.peek(id);
    if (!task) throw new AppError('task_not_found', `No task with id ${id}`, { param: 'id' });
    return task;
  }

  /** The account of each task: its hold's, else its key's (keys never change account, G300). */
  private async accountsOf(tasks: readonly TaskRecord[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const t of tasks) if (t.charge) out.set(t.ownerKeyId, t.charge.accountId);
    const missing = [...new Set(tasks.map((t) => t.ownerKeyId))].filter((k) => !out.has(k));
    for (const k of missing) {
      const key = await this.deps.keys.get(k);
      if (key) out.set(k, key.accountId);
    }
    return out;
  }
}
