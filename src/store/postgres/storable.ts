/**
 * False for a caller-given id no row can have because PostgreSQL text cannot hold it (NUL): a
 * lookup by it answers "none" without asking, since asking is an error (a 500, and in a batched
 * lookup the failure of every lookup batched with it) (G245).
 */
export const storable = (id: string): boolean => !id.includes('\u0000');
