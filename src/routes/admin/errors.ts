/** What every admin route can answer with an error: no or unknown key (401), a caller key (403 admin_only), an internal fault, the store down. */
export const ADMIN_ERRORS = [401, 403, 500, 503] as const;
