/** How long signing keys fetched from an upstream are kept, and how often a delivery may make them fetched again (G158). */
export const SIGNING_KEYS = {
  /** Kept this long (fal asks for at most 24 h), then fetched again when next needed. */
  maxAgeMs: 24 * 3600_000,
  /** A delivery no key at hand matches fetches them again at most this often (they may have been rotated); a failed fetch is not repeated sooner. */
  minRefreshMs: 30_000,
  /** Bound on one fetch, ms. */
  timeoutMs: 10_000,
} as const;
