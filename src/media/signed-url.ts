import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** What a signed URL serves: a task's result files, or the gateway's copies of its caller media (for an upstream). */
export type SignedScope = 'files' | 'inputs';

/**
 * HMAC-signed, expiring URLs (D20): result files at
 * `{publicUrl}/files/{taskId}/{name}?exp={unix seconds}&sig={HMAC-SHA256(taskId/name/exp), base64url}`,
 * and a task's caller media (handed to an upstream, G92) at `/inputs/...`, signed over
 * `inputs/taskId/name/exp` so a signature of one scope never opens the other.
 */
export class ResultUrlSigner {
  /** Signed URLs already made: a finished task is polled again and again, its URL never changes. */
  private readonly made = new Map<string, string>();

  constructor(
    private readonly secret: string,
    private readonly publicUrl: string,
    private readonly cacheSize = 10_000,
  ) {}

  private mac(taskId: string, name: string, exp: number, scope: SignedScope = 'files'): string {
    return createHmac('sha256', this.secret)
      .update(`${scope === 'files' ? '' : `${scope}/`}${taskId}/${name}/${exp}`)
      .digest('base64url');
  }

  /** The absolute URL of a task's copy of a caller medium, valid until `expiresAtMs` (for an upstream to fetch). */
  signInputUrl(taskId: string, name: string, expiresAtMs: number): string {
    const exp = Math.floor(expiresAtMs / 1000);
    return `${this.publicUrl}/inputs/${encodeURIComponent(taskId)}/${encodeURIComponent(name)}?exp=${exp}&sig=${this.mac(taskId, name, exp, 'inputs')}`;
  }

  /** The absolute download URL of a result file, valid until `expiresAtMs`. */
  signResultUrl(taskId: string, name: string, expiresAtMs: number): string {
    const exp = Math.floor(expiresAtMs / 1000);
    const key = `${taskId}/${name}/${exp}`;
    let url = this.made.get(key);
    if (url === undefined) {
      url = `${this.publicUrl}/files/${encodeURIComponent(taskId)}/${encodeURIComponent(name)}?exp=${exp}&sig=${this.mac(taskId, name, exp)}`;
      if (this.made.size >= this.cacheSize) this.made.delete(this.made.keys().next().value!);
      this.made.set(key, url);
    }
    return url;
  }

  /** `ok`, or why the link is refused. Constant-time comparison of the signature. */
  verify(
    taskId: string,
    name: string,
    exp: string | undefined,
    sig: string | undefined,
    nowMs = Date.now(),
    scope: SignedScope = 'files',
  ): 'ok' | 'invalid' | 'expired' {
    if (!exp || !sig || !/^\d{1,12}$/.test(exp)) return 'invalid';
    const expected = Buffer.from(this.mac(taskId, name, Number(exp), scope));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
    return Number(exp) * 1000 < nowMs ? 'expired' : 'ok';
  }
}

/** The configured secret, or one generated on first start and kept at `<dataDir>/signing-secret` (mode 0600). */
export function loadSigningSecret(dataDir: string, configured: string | undefined): string {
  if (configured) return configured;
  const file = path.join(dataDir, 'signing-secret');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    fs.mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32).toString('base64url');
    try {
      fs.writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
      return secret;
    } catch {
      return fs.readFileSync(file, 'utf8').trim(); // another process wrote it first
    }
  }
}
