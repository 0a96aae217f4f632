import { AppError, invalidField } from '../errors.js';

const present = (body: Record<string, unknown>, field: string): boolean => body[field] !== undefined && body[field] !== null;

/** Both members of an exclusive pair sent: a 400 naming both (D10). */
export function assertExclusive(body: Record<string, unknown>, a: string, b: string): void {
  if (present(body, a) && present(body, b)) {
    throw new AppError('exclusive_fields', `${a} and ${b} are mutually exclusive; send only one of them`, { param: `${a},${b}` });
  }
}

/** Fields of two groups (e.g. first/last frame vs reference images) sent together: a 400 naming both groups. */
export function assertGroupsExclusive(body: Record<string, unknown>, groupA: readonly string[], groupB: readonly string[], what: string): void {
  const a = groupA.filter((f) => present(body, f) && !(Array.isArray(body[f]) && (body[f] as unknown[]).length === 0));
  const b = groupB.filter((f) => present(body, f) && !(Array.isArray(body[f]) && (body[f] as unknown[]).length === 0));
  if (a.length > 0 && b.length > 0) {
    throw new AppError('exclusive_fields', `${a.join(', ')} and ${b.join(', ')} cannot be combined: ${what}`, { param: [...a, ...b].join(',') });
  }
}

/** `field` needs `other` (e.g. last_image requires first_image). */
export function assertRequires(body: Record<string, unknown>, field: string, other: string): void {
  if (present(body, field) && !present(body, other)) throw invalidField(field, `${field} requires ${other}`);
}

/** An integer-like value (D13) that must be one of `allowed`. */
export function assertOneOf(field: string, value: number, allowed: readonly number[], context = ''): void {
  if (!allowed.includes(value)) {
    throw invalidField(field, `${field} must be ${allowed.length === 1 ? String(allowed[0]) : `one of ${allowed.join(', ')}`}${context} (got ${value})`);
  }
}

/** An integer within [min, max]. */
export function assertRange(field: string, value: number, min: number, max: number, context = ''): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidField(field, `${field} must be an integer from ${min} to ${max}${context} (got ${value})`);
  }
}
