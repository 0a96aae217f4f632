/** Where fal publishes the public keys of its webhook signatures. */
export const FAL_JWKS_URL = 'https://rest.alpha.fal.ai/.well-known/jwks.json';

/** What a providers.json entry of type fal uses where it leaves a field out (kept apart from the adapter, which is loaded only when a provider of this type is configured: G422). */
export const FAL_DEFAULTS = { baseUrl: 'https://queue.fal.run', timeoutMs: 60_000, connectTimeoutMs: 10_000, jwksUrl: FAL_JWKS_URL } as const;
