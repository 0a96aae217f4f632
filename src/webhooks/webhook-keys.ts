/**
 * What the webhook routes ask of the store, as a service (G392): a key's signing secret (made on
 * first use, G209), its rotation, and the deliveries of a task (G213). The routes see no store type.
 */
import { AppError } from '../errors.js';
import type { WebhookDelivery, WebhookStore } from '../store/webhook-types.js';
import { newWebhookSecret } from './signing.js';

export type { WebhookDelivery } from '../store/webhook-types.js';

export class WebhookKeys {
  constructor(
    private readonly store: Pick<WebhookStore, 'secrets' | 'rotateSecret' | 'listForTask'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key's current signing secret, made now when it has none. */
  async currentSecret(keyId: string): Promise<string> {
    return this.present(await this.store.secrets(keyId, newWebhookSecret()), keyId);
  }

  /** A new signing secret for the key (the old one keeps signing for 24 h). */
  async rotateSecret(keyId: string): Promise<string> {
    return this.present(await this.store.rotateSecret(keyId, newWebhookSecret(), this.now()), keyId);
  }

  /** The deliveries of a task (the caller checked the task is the key's own). */
  deliveriesOf(taskId: string): Promise<WebhookDelivery[]> {
    return this.store.listForTask(taskId);
  }

  private present(secrets: { current: string } | undefined, keyId: string): string {
    if (!secrets) throw new AppError('internal_error', 'Internal server error', { cause: new Error(`no key ${keyId}`) });
    return secrets.current;
  }
}
