/**
 * fal's webhooks (G160). A submit names the callback URL in its `fal_webhook` query
 * parameter (provider.ts); fal then POSTs `{request_id, gateway_request_id, status: "OK" |
 * "ERROR", payload, error}` there once the request ends, signed with ED25519
 * (webhook-signature.ts). The public keys are the JSON Web Key Set at `jwksUrl` (fal's, by
 * default): fetched when the first delivery comes, fetched again after a day or when a delivery
 * matches none of them (rotated), at most every 30 s (callbacks/refreshing-value.ts). A delivery is
 * about the request its signed `x-fal-webhook-request-id` names; its body is not read (the check
 * reads the outcome from the queue).
 */
import type { KeyObject } from 'node:crypto';
import { RefreshingValue } from '../callbacks/refreshing-value.js';
import { SIGNING_KEYS } from '../callbacks/signing-keys.js';
import { channelFault, malformedReply } from '../toolkit/errors.js';
import { ChannelError, type CallbackCheck, type CallbackDelivery, type ProviderCallbacks } from '../types.js';
import type { FalHttp } from './http.js';
import { ed25519KeysOf, readFalWebhook, signedByFal } from './webhook-signature.js';

export interface FalCallbackOptions {
  id: string;
  who: string;
  http: FalHttp;
  /** The key set's address. */
  jwksUrl: URL;
  /** The clock of the keys' cache, ms (tests). */
  now?: () => number;
}

export function falCallbacks(o: FalCallbackOptions): ProviderCallbacks {
  const { id, who } = o;
  const keys = new RefreshingValue<KeyObject[]>(
    async () => {
      const answer = await o.http.getPublic(o.jwksUrl, new AbortController().signal, SIGNING_KEYS.timeoutMs);
      if (answer.status < 200 || answer.status >= 300) {
        throw channelFault(id, answer.status, answer.headers, '', who) ?? new ChannelError(`${who}'s webhook key set answered HTTP ${answer.status}`);
      }
      try {
        return ed25519KeysOf(JSON.parse(answer.text));
      } catch (err) {
        throw ChannelError.of(
          malformedReply(id, `a webhook key set that cannot be used (${err instanceof SyntaxError ? 'not JSON' : (err as Error).message})`, who),
        );
      }
    },
    { ...SIGNING_KEYS, ...(o.now && { now: o.now }) },
  );

  return {
    async verify(delivery: CallbackDelivery, now: number): Promise<CallbackCheck> {
      const signed = readFalWebhook(delivery.headers, now);
      if ('valid' in signed) return signed;
      let valid = signedByFal(signed, delivery.body, await keys.get());
      if (!valid) {
        const fresh = await keys.refresh().catch(() => undefined);
        valid = fresh !== undefined && signedByFal(signed, delivery.body, fresh);
      }
      if (!valid)
        return {
          valid: false,
          kind: 'forged',
          header: 'x-fal-webhook-signature',
          message: `x-fal-webhook-signature: no key of ${who}'s webhook key set made this signature`,
        };
      // fal names no delivery id: the signature is one (it covers the request, the time and the body)
      return { valid: true, upstreamId: signed.requestId, deliveryId: signed.signature.toString('hex') };
    },
  };
}
