/**
 * fal's webhooks as the fake fal queue sends them, from fal's webhook reference: once a request
 * submitted with `?fal_webhook=<url>` ends, a POST of `{request_id, gateway_request_id, status:
 * "OK" | "ERROR", payload, error?}` (`payload` the model's output, or its error body with `error:
 * "Invalid status code: <status>"`) to that URL, with `x-fal-webhook-request-id`,
 * `x-fal-webhook-user-id`, `x-fal-webhook-timestamp` (Unix seconds) and `x-fal-webhook-signature`:
 * the hex ED25519 signature of `<request id>\n<user id>\n<timestamp>\n<hex SHA-256 of the body>`,
 * made with a key whose public half the fake publishes as a JSON Web Key Set
 * (`GET /.well-known/jwks.json`: `{keys: [{kty: "OKP", crv: "Ed25519", x, kid, use, alg}]}`). A
 * delivery answered with an error is not sent again here (fal retries; the gateway must not need
 * it). `mode` makes deliveries go missing (`drop`) or signed by a key not published
 * (`unpublished-key`); `rotateKey()` publishes a new key and signs with it from then on. Test-only.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface FalWebhookDelivery {
  requestId: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The receiver's HTTP status; 0 when it could not be reached. */
  status: number;
  answer: string;
}

export type FalWebhookMode = 'deliver' | 'drop' | 'unpublished-key';

export class FalWebhooks {
  readonly userId = `fal-user-${randomBytes(6).toString('hex')}`;
  mode: FalWebhookMode = 'deliver';
  readonly deliveries: FalWebhookDelivery[] = [];
  /** Fetches of the key set. */
  jwksFetches = 0;
  private key = generateKeyPairSync('ed25519');
  private keyId = randomBytes(4).toString('hex');
  private readonly sending = new Set<Promise<void>>();

  /** The key set fal publishes. */
  jwks(): { keys: Array<Record<string, unknown>> } {
    this.jwksFetches++;
    return { keys: [{ ...this.key.publicKey.export({ format: 'jwk' }), kid: this.keyId, use: 'sig', alg: 'EdDSA' }] };
  }

  /** Publishes a new key and signs with it from now on. */
  rotateKey(): void {
    this.key = generateKeyPairSync('ed25519');
    this.keyId = randomBytes(4).toString('hex');
  }

  /** The four headers of a delivery of `body` about `requestId`, signed with the published key unless another is given. */
  sign(requestId: string, body: string, options: { timestamp?: number; key?: KeyObject; userId?: string } = {}): Record<string, string> {
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const userId = options.userId ?? this.userId;
    const digest = createHash('sha256').update(body).digest('hex');
    const signature = sign(null, Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`), options.key ?? this.key.privateKey);
    return {
      'x-fal-webhook-request-id': requestId,
      'x-fal-webhook-user-id': userId,
      'x-fal-webhook-timestamp': timestamp,
      'x-fal-webhook-signature': signature.toString('hex'),
    };
  }

  /** Tells `url` that `requestId` ended with `outcome` (the model's answer), per `mode`. */
  deliver(url: string, requestId: string, outcome: { status: number; body: unknown }): void {
    if (this.mode === 'drop') return;
    const ok = outcome.status < 300;
    const body = JSON.stringify({
      request_id: requestId,
      gateway_request_id: requestId,
      status: ok ? 'OK' : 'ERROR',
      payload: outcome.body,
      ...(!ok && { error: `Invalid status code: ${outcome.status}` }),
    });
    const signed = this.sign(requestId, body, this.mode === 'unpublished-key' ? { key: generateKeyPairSync('ed25519').privateKey } : {});
    const headers = { 'content-type': 'application/json', ...signed };
    const sent = fetch(url, { method: 'POST', headers, body })
      .then(
        async (res) => ({ status: res.status, answer: await res.text() }),
        (err: unknown) => ({ status: 0, answer: String(err) }),
      )
      .then((r) => {
        this.deliveries.push({ requestId, url, headers, body, ...r });
      });
    this.sending.add(sent);
    void sent.finally(() => this.sending.delete(sent));
  }

  /** Deliveries still under way. */
  async settled(): Promise<void> {
    await Promise.all([...this.sending]);
  }
}
