/**
 * Limits every process shares through the database (G196-G197): rate-limit counts in the
 * `rate_limits` table (rate-limiter-flexible's RateLimiterPostgres: one upsert per request) and
 * long-poll slots in `wait_slots`, taken by `mediagate_take_wait_slot` (migrations.ts).
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { sharedBackend, type RateLimitBackend } from '../../limits/backend.js';
import type { WaitSlots } from '../types.js';

export function postgresRateLimits(pool: pg.Pool, logger?: Logger): RateLimitBackend {
  return sharedBackend(
    'postgres',
    (options) =>
      new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true, // by the migrations
        ...options,
      }),
    async () => undefined,
    logger,
  );
}

export class PostgresWaitSlots implements WaitSlots {
  constructor(
    private readonly pool: pg.Pool,
    private readonly logger?: Logger,
  ) {}

  async take(keyId: string, max: number, untilMs: number): Promise<(() => void) | undefined> {
    const id = randomBytes(12).toString('base64url');
    const { rows } = await this.pool.query<{ ok: boolean }>({
      name: 'mg_wait_slot_take',
      text: 'SELECT mediagate_take_wait_slot($1, $2, $3, $4, $5) AS ok',
      values: [id, keyId, untilMs, Date.now(), max],
    });
    if (!rows[0]?.ok) return undefined;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // a slot that cannot be dropped now ends at its deadline anyway
      this.pool
        .query({ name: 'mg_wait_slot_release', text: 'DELETE FROM wait_slots WHERE id = $1', values: [id] })
        .catch((err: unknown) => this.logger?.warn({ err }, 'PostgreSQL: a long-poll slot could not be released; it ends at its deadline'));
    };
  }
}
