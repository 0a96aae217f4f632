/**
 * Replicate's webhooks as the fake Replicate sends them, from Replicate's webhook reference ("Verify
 * webhooks") and the official client (`validateWebhook`, `webhooks.default.secret.get`): a POST of
 * the prediction as JSON (the body `GET /predictions/{id}` answers) to the create's `webhook`, for
 * each event its `webhook_events_filter` names (all four when it names none), signed by Standard
 * Webhooks with the account's secret (`whsec_<base64>`, what `GET /v1/webhooks/default/secret`
 * answers): `webhook-id` (`msg_...`), `webhook-timestamp` (Unix seconds) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`). A delivery answered with an error is
 * not sent again here (Replicate retries; the gateway must not need it). `mode` makes deliveries
 * go missing (`drop`) or carry the signature of another secret (`wrong-secret`). Test-only.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_EVENTS = ['start', 'output', 'logs', 'completed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookDelivery {
  predictionId: string;
  event: WebhookEvent;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The receiver's HTTP status; 0 when it could not be reached. */
  status: number;
  /** The receiver's answer. */
  answer: string;
}

export type WebhookMode = 'deliver' | 'drop' | 'wrong-secret';

export class ReplicateWebhooks {
  readonly secret = `whsec_${randomBytes(24).toString('base64')}`;
  mode: WebhookMode = 'deliver';
  readonly deliveries: WebhookDelivery[] = [];
  private readonly sending = new Set<Promise<void>>();

  /** The three headers of a delivery of `body`, signed with the account's secret unless another is named. */
  sign(body: string, options: { id?: string; timestamp?: number; secret?: string } = {}): Record<string, string> {
    const id = options.id ?? `msg_${randomBytes(12).toString('base64url')}`;
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const key = Buffer.from((options.secret ?? this.secret).replace(/^whsec_/, ''), 'base64');
    const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
  }

  /** Sends one event of a prediction (`body`: the prediction as JSON) to `url`, per `mode`. */
  deliver(url: string, predictionId: string, event: WebhookEvent, body: string): void {
    if (this.mode === 'drop') return;
    const signed = this.sign(body, this.mode === 'wrong-secret' ? { secret: `whsec_${randomBytes(24).toString('base64')}` } : {});
    const headers = { 'content-type': 'application/json', ...signed };
    const sent = fetch(url, { method: 'POST', headers, body })
      .then(
        async (res) => ({ status: res.status, answer: await res.text() }),
        (err: unknown) => ({ status: 0, answer: String(err) }),
      )
      .then((r) => {
        this.deliveries.push({ predictionId, event, url, headers, body, ...r });
      });
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }

  /** Deliveries still under way. */
  async settled(): Promise<void> {
    await Promise.all([...this.sending]);
  }
}
