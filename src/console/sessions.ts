/**
 * Web console sessions (G361): signing in exchanges an API key for a random session id sent back
 * as an HttpOnly cookie; the store keeps only the id's SHA-256, the key's hash and a CSRF token, so
 * every process of a cluster answers the same sessions and the key never reaches browser storage.
 * A request with the cookie (and no Authorization header) is authenticated as the key it was
 * signed in with, by the same checks as a bearer key (revoked or expired ends it at once); every
 * change made with it must send the session's CSRF token in `x-csrf-token` (G362).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { authenticate } from '../auth/key-rules.js';
import { hashApiKey } from '../auth/keys.js';
import { CSRF_HEADER, SESSION_COOKIE } from '../contract/console.js';
import { AppError } from '../errors.js';
import type { ApiKeyRecord, KeyStore, SessionRecord, SessionStore } from '../store/types.js';

export type { KeyStore, SessionRecord } from '../store/types.js';

/** Methods that change nothing: no CSRF token asked. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export interface SessionSettings {
  /** How long a session lasts, ms. */
  ttlMs: number;
  /** The public URL: `Secure` when it is https, the cookie's path its path (G363). */
  publicUrl: string;
  now: () => number;
}

/** A signed-in session: the key it acts as, its CSRF token and expiry; `cookie` only right after sign-in. */
export interface ConsoleSession {
  key: ApiKeyRecord;
  record: SessionRecord;
}

/** The value of the session cookie in a `Cookie` header, if any. */
export function sessionCookieValue(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class ConsoleSessions {
  private readonly secure: boolean;
  private readonly cookiePath: string;
  private lastSweep = 0;

  constructor(
    private readonly store: SessionStore,
    private readonly keys: Pick<KeyStore, 'findActiveByHash'>,
    private readonly settings: SessionSettings,
  ) {
    const url = new URL(settings.publicUrl);
    this.secure = url.protocol === 'https:';
    this.cookiePath = `${url.pathname.replace(/\/+$/, '')}/`;
  }

  /** Signs in with an API key: 401 as on the API when it is not usable; the new session and its cookie value. */
  async signIn(apiKey: string): Promise<ConsoleSession & { cookieValue: string }> {
    const now = this.settings.now();
    const keyHash = hashApiKey(apiKey);
    const key = await authenticate(this.keys, keyHash, now);
    const cookieValue = randomBytes(32).toString('base64url');
    const record: SessionRecord = {
      idHash: sha256(cookieValue),
      keyHash,
      csrfToken: randomBytes(24).toString('base64url'),
      createdAt: now,
      expiresAt: key.expiresAt != null ? Math.min(key.expiresAt, now + this.settings.ttlMs) : now + this.settings.ttlMs,
    };
    await this.store.insert(record);
    this.sweep(now);
    return { key, record, cookieValue };
  }

  /** The live session of a cookie value, or undefined (unknown, signed out, expired). */
  async find(cookieValue: string): Promise<SessionRecord | undefined> {
    const record = await this.store.find(sha256(cookieValue));
    return record && record.expiresAt > this.settings.now() ? record : undefined;
  }

  /** The session of a request's cookie for the auth hook: 401 without a live one, 403 for a change without its CSRF token. */
  async requestSession(cookieValue: string, method: string, csrfHeader: string | string[] | undefined): Promise<SessionRecord> {
    const record = await this.find(cookieValue);
    if (!record) throw new AppError('session_expired', 'The console session is unknown, signed out or expired; sign in again');
    if (!SAFE_METHODS.has(method) && (typeof csrfHeader !== 'string' || !sameToken(csrfHeader, record.csrfToken))) {
      throw new AppError('csrf_token_invalid', `A change made with a console session must send the session's CSRF token in the ${CSRF_HEADER} header`);
    }
    return record;
  }

  async signOut(cookieValue: string): Promise<void> {
    await this.store.delete(sha256(cookieValue));
  }

  /** The `Set-Cookie` value giving the session (G363). */
  setCookie(cookieValue: string, record: Pick<SessionRecord, 'createdAt' | 'expiresAt'>): string {
    const maxAge = Math.max(0, Math.floor((record.expiresAt - record.createdAt) / 1000));
    return `${SESSION_COOKIE}=${cookieValue}; Path=${this.cookiePath}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`;
  }

  /** The `Set-Cookie` value ending it in the browser. */
  clearCookie(): string {
    return `${SESSION_COOKIE}=; Path=${this.cookiePath}; Max-Age=0; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`;
  }

  /** Expired sessions are forgotten at most once an hour, after a sign-in (never on the request path). */
  private sweep(now: number): void {
    if (now - this.lastSweep < 3_600_000) return;
    this.lastSweep = now;
    this.store.deleteExpired(now).catch(() => undefined);
  }
}
