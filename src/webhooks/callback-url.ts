/**
 * `callback_url` of a create request (G208): taken out of the body before the family plans the
 * task (Model Center passes unknown fields to its provider: this one never goes there) and checked
 * by the caller-URL rule: an absolute http(s) URL, not naming a private or loopback literal address
 * (names are resolved, and refused when private, at delivery time: they may change).
 */
import { AppError } from '../errors.js';
import { classifyAddress, parseHostLiteral } from '../media/address-policy.js';

const FIELD = 'callback_url';
const MAX_LENGTH = 2048;

/**
 * The task's callback URL: the body's `callback_url` (removed from the body), else the key's
 * default; `null` in the body opts out of the default. Throws a 400 naming the field otherwise.
 */
export function takeCallbackUrl(body: unknown, keyDefault: string | null | undefined, allowPrivate: boolean): string | null {
  if (typeof body !== 'object' || body === null || !Object.hasOwn(body, FIELD)) return keyDefault ?? null;
  const record = body as Record<string, unknown>;
  const value = record[FIELD];
  delete record[FIELD];
  if (value === null) return null;
  return checkCallbackUrl(value, allowPrivate);
}

/** The caller-URL rule for a webhook URL (also the operator's default, `keys webhook`); returns the URL as given. */
export function checkCallbackUrl(value: unknown, allowPrivate: boolean, field = FIELD): string {
  if (typeof value !== 'string') throw new AppError('invalid_request', `${field}: must be a string (an http or https URL)`, { param: field });
  if (value.length > MAX_LENGTH) throw new AppError('invalid_request', `${field}: must be at most ${MAX_LENGTH} characters`, { param: field });
  // kept as given: a NUL could not even be stored (PostgreSQL text), and the URL parser would drop a tab or newline
  if (/\p{Cc}/u.test(value)) throw new AppError('invalid_request', `${field}: must not contain control characters (percent-encode them)`, { param: field });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AppError('invalid_request', `${field}: is not a valid absolute URL`, { param: field });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('url_not_allowed', `${field}: only http and https URLs are allowed; got a ${url.protocol.replace(/:$/, '')}: URL`, { param: field });
  }
  if (url.username !== '' || url.password !== '') throw new AppError('invalid_request', `${field}: must not carry a user name or password`, { param: field });
  const literal = parseHostLiteral(url.hostname);
  if (literal && !allowPrivate) {
    const cls = classifyAddress(literal.address);
    if (cls !== 'public') {
      throw new AppError(
        'url_not_allowed',
        `${field}: names ${/^[aeiou]/.test(cls) ? 'an' : 'a'} ${cls} address (${literal.address}); only public addresses are allowed`,
        { param: field },
      );
    }
  }
  return value;
}
