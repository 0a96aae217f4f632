/**
 * Replicate's webhooks (G159). A create names the callback URL as `webhook` with
 * `webhook_events_filter: ["completed"]` (provider.ts); Replicate then POSTs the prediction there
 * once it ends, signed by Standard Webhooks (callbacks/standard-webhooks.ts) with the account's
 * signing secret. The secret is the one `GET /webhooks/default/secret` answers (`{"key":
 * "whsec_..."}`) with the channel's token: fetched when the first delivery comes, kept in memory
 * only (never logged), fetched again after a day or when a delivery matches it not (rotated), at
 * most every 30 s (callbacks/refreshing-value.ts). A delivery is about the prediction its body
 * names (`id`), read only once the signature holds.
 */
import { RefreshingValue } from '../callbacks/refreshing-value.js';
import { SIGNING_KEYS } from '../callbacks/signing-keys.js';
import { readStandardWebhook, signedWith } from '../callbacks/standard-webhooks.js';
import { channelFault, malformedReply, readErrorBody, type Scrub } from '../toolkit/errors.js';
import { ChannelError, type CallbackCheck, type CallbackDelivery, type ProviderCallbacks } from '../types.js';
import type { ReplicateHttp } from './http.js';

export interface ReplicateCallbackOptions {
  id: string;
  who: string;
  http: ReplicateHttp;
  scrub: Scrub;
  /** The clock of the secret's cache, ms (tests). */
  now?: () => number;
}

const SECRET = /^whsec_[A-Za-z0-9+/]{16,}={0,2}$/;

export function replicateCallbacks(o: ReplicateCallbackOptions): ProviderCallbacks {
  const { id, who } = o;
  const secret = new RefreshingValue(
    async () => {
      const answer = await o.http.send('GET', '/webhooks/default/secret', undefined, new AbortController().signal, SIGNING_KEYS.timeoutMs);
      if (answer.status < 200 || answer.status >= 300) {
        const said = o.scrub(readErrorBody(answer.text).message);
        throw (
          channelFault(id, answer.status, answer.headers, said, who) ??
          new ChannelError(`${who} refused the query of its webhook signing secret (HTTP ${answer.status})${said ? `: ${said}` : ''}`)
        );
      }
      let key: unknown;
      try {
        key = (JSON.parse(answer.text) as { key?: unknown } | null)?.key;
      } catch {
        throw ChannelError.of(malformedReply(id, 'a webhook secret answer that is not JSON', who));
      }
      if (typeof key !== 'string' || !SECRET.test(key))
        throw ChannelError.of(malformedReply(id, 'a webhook secret answer without a "key" of the form whsec_<base64>', who));
      return key;
    },
    { ...SIGNING_KEYS, ...(o.now && { now: o.now }) },
  );

  return {
    async verify(delivery: CallbackDelivery, now: number): Promise<CallbackCheck> {
      const signed = readStandardWebhook(delivery.headers, now);
      if ('valid' in signed) return signed;
      let valid = signedWith(signed, delivery.body, await secret.get());
      if (!valid) {
        const fresh = await secret.refresh().catch(() => undefined);
        valid = fresh !== undefined && signedWith(signed, delivery.body, fresh);
      }
      if (!valid)
        return {
          valid: false,
          kind: 'forged',
          header: 'webhook-signature',
          message: `webhook-signature: no signature is the one ${who}'s webhook signing secret makes of this delivery`,
        };
      let predictionId: unknown;
      try {
        predictionId = (JSON.parse(delivery.body.toString('utf8')) as { id?: unknown } | null)?.id;
      } catch {
        predictionId = undefined;
      }
      if (typeof predictionId !== 'string' || predictionId === '')
        return { valid: false, kind: 'malformed', header: 'body', message: 'body: a signed delivery that is not a prediction (no id)' };
      return { valid: true, upstreamId: predictionId, deliveryId: signed.id };
    },
  };
}
