/**
 * The task families of the contract (docs/reference/api/README.md), chat aside:
 * every per-family table in the code is a `Record<FamilyId, ...>`, so adding a family here is a
 * compile error until every table has it.
 */
export const FAMILIES = ['pic', 'clip', 'reel', 'motion', 'videos', 'model-center'] as const;

export type FamilyId = (typeof FAMILIES)[number];

/** Request form inside a family: `A`/`B` for clip and reel (docs/reference/api/clip.md, docs/reference/api/reel.md), null elsewhere. */
export type FamilyForm = 'A' | 'B' | null;
