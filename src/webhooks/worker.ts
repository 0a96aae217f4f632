/**
 * The delivery worker (G211): in every process with the worker role, it leases due deliveries from
 * the outbox (any process may take any delivery; a lease that lapses with its process makes the
 * delivery due again), renders the body the family's query endpoint gives for the task at the
 * first attempt (kept, so retries send the same bytes under the same `webhook-id`), signs it with
 * the owner key's secret at send time and POSTs it; the outcome goes through
 * {@link recordDeliveryOutcome}.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { WebhookSettings } from '../config.js';
import { queryReply } from '../families/query-reply.js';
import type { ReplyContext } from '../families/reply-context.js';
import type { ResolvedAddress } from '../media/safe-fetch.js';
import type { TaskStore } from '../store/types.js';
import type { DeliveryAttempt, DeliveryOutcome, WebhookDelivery, WebhookStore } from '../store/webhook-types.js';
import type { WebhookOutcome } from '../metrics/gateway-metrics.js';
import { postWebhook, type PostResult } from './post.js';
import { afterFailure } from './schedule.js';
import { untilStoreAnswers } from '../tasks/patient-store.js';
import { newWebhookSecret, signatureHeader } from './signing.js';

export const USER_AGENT = 'mediagate-webhooks/1';
/** A delivery's lease: twice the attempt's own bound and 5 s more; then another worker may take it over (its process died). */
const leaseMs = (timeoutMs: number): number => 2 * timeoutMs + 5000;

export interface DeliveryWorkerDeps {
  webhooks: WebhookStore;
  tasks: TaskStore;
  links: ReplyContext;
  log: Logger;
  settings: WebhookSettings;
  allowPrivate: boolean;
  /** How often the outbox is read when nothing is due, ms (default 1000). */
  pollMs?: number;
  /** Deliveries attempted at once by this process (default 16). */
  concurrency?: number;
  /** Host name resolution for the receivers (tests). */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Counts each recorded attempt by outcome (`/metrics`, G224). */
  metrics?: { webhookDelivery(outcome: WebhookOutcome): void } | undefined;
}

/**
 * The one place a delivery attempt's outcome is written and reported (metrics hook here). False
 * when the worker lost its lease meanwhile (another worker took the delivery over).
 */
export async function recordDeliveryOutcome(
  webhooks: WebhookStore,
  delivery: WebhookDelivery,
  workerId: string,
  attempt: DeliveryAttempt,
  outcome: DeliveryOutcome,
  log: Logger,
  giveUp: () => boolean = () => false,
): Promise<boolean> {
  // a POST that was made is recorded even across a dropped database connection: unrecorded, its
  // lease would lapse and the receiver get it again (G258)
  const { value: kept } = await untilStoreAnswers(() => webhooks.recordAttempt(delivery.id, workerId, attempt, outcome), { log, giveUp }, 'a webhook attempt');
  const fields = {
    webhookId: delivery.id,
    taskId: delivery.taskId,
    attempt: delivery.attempts.length + 1,
    statusCode: attempt.statusCode,
    durationMs: attempt.durationMs,
  };
  if (!kept) log.warn(fields, 'webhook: the delivery was taken over by another worker; this attempt is not recorded');
  else if (outcome.status === 'pending')
    log.info({ ...fields, error: attempt.error, nextAttemptAt: outcome.nextAttemptAt }, 'webhook attempt failed; retrying later');
  else if (outcome.status === 'delivered') log.info(fields, 'webhook delivered');
  else log.warn({ ...fields, error: attempt.error }, 'webhook delivery failed for good');
  return kept;
}

/** An attempt as `mediagate_webhook_deliveries_total` counts it: the last failed attempt of a delivery is `gave_up`. */
export function metricOutcome(outcome: DeliveryOutcome, failure: PostResult['failure']): WebhookOutcome {
  if (outcome.status === 'delivered') return 'delivered';
  if (outcome.status === 'failed') return 'gave_up';
  return failure === 'timeout' || failure === 'refused' ? failure : 'failed';
}

export class DeliveryWorker {
  private readonly workerId = `wh-${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private stopped = true;

  constructor(private readonly deps: DeliveryWorkerDeps) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** No new attempts; resolves once the attempts under way ended (each is bounded by the attempt timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.tick();
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    const room = (this.deps.concurrency ?? 16) - this.running.size;
    let claimed = 0;
    try {
      if (room > 0) {
        const now = Date.now();
        const due = await this.deps.webhooks.claimDue(this.workerId, now, now + leaseMs(this.deps.settings.timeoutMs), room);
        claimed = due.length;
        for (const delivery of due) {
          const run = this.deliver(delivery)
            .catch((err: unknown) =>
              this.deps.log.error({ err, webhookId: delivery.id }, 'webhook: attempt failed to run; the delivery is tried again when its lease lapses'),
            )
            .finally(() => {
              this.running.delete(run);
              this.schedule(0); // room for the next
            });
          this.running.add(run);
        }
      }
    } catch (err) {
      this.deps.log.error({ err }, 'webhook: could not read the outbox');
    } finally {
      this.ticking = false;
      this.schedule(claimed > 0 && claimed === room ? 0 : (this.deps.pollMs ?? 1000));
    }
  }

  private async deliver(delivery: WebhookDelivery): Promise<void> {
    const { webhooks, settings, log } = this.deps;
    const body = delivery.body ?? (await this.render(delivery));
    if (body === undefined) return; // lease lost
    const secrets = await webhooks.secrets(delivery.ownerKeyId, newWebhookSecret());
    if (!secrets) {
      // nothing can sign it, now or later: given up at once (retrying would run to the lease's end again and again)
      const attempt: DeliveryAttempt = {
        at: Date.now(),
        statusCode: null,
        error: `not sent: the API key ${delivery.ownerKeyId} that owns the task no longer exists, so there is no secret to sign with`,
        durationMs: 0,
      };
      if (await recordDeliveryOutcome(webhooks, delivery, this.workerId, attempt, { status: 'failed' }, log)) this.deps.metrics?.webhookDelivery('gave_up');
      return;
    }
    const started = Date.now();
    const timestamp = Math.floor(started / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, delivery.id, timestamp, body, started),
    };
    const result = await postWebhook(delivery.url, headers, body, {
      timeoutMs: settings.timeoutMs,
      allowPrivate: this.deps.allowPrivate,
      ...(this.deps.lookup && { lookup: this.deps.lookup }),
    });
    const ended = Date.now();
    const attempt: DeliveryAttempt = { at: started, statusCode: result.statusCode, error: result.error, durationMs: ended - started };
    // an address the policy refuses is refused at every retry too: given up at once (G275)
    const outcome: DeliveryOutcome =
      result.error === null
        ? { status: 'delivered' }
        : result.failure === 'refused'
          ? { status: 'failed' }
          : afterFailure(settings, delivery.attempts.length + 1, delivery.createdAt, ended);
    if (await recordDeliveryOutcome(webhooks, delivery, this.workerId, attempt, outcome, log, () => this.stopped))
      this.deps.metrics?.webhookDelivery(metricOutcome(outcome, result.failure));
  }

  /**
   * The task's query reply, kept as the delivery's body unless an earlier attempt kept one;
   * undefined when the lease was lost, or the task was deleted (its delivery went with it).
   */
  private async render(delivery: WebhookDelivery): Promise<string | undefined> {
    const task = await this.deps.tasks.get(delivery.taskId);
    if (!task) return undefined;
    return this.deps.webhooks.keepBody(delivery.id, this.workerId, JSON.stringify(queryReply(task, this.deps.links)));
  }
}
