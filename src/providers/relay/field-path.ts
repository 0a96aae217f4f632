/**
 * Field paths as the contract names caller media (`image_urls[2]`, `content[1].image_url.url`,
 * `first_image`, `referenceImages[0]`; src/contract/media-refs.ts): parsed, read and replaced in a
 * JSON body, so the relay puts each medium's upstream URL where the caller's was (G95).
 */

export type PathStep = string | number;

const STEP = /([^.[\]]+)|\[(\d+)\]/y;

/** `content[1].image_url.url` -> `['content', 1, 'image_url', 'url']`; undefined when it is not a path. */
export function parseFieldPath(path: string): PathStep[] | undefined {
  const steps: PathStep[] = [];
  let at = 0;
  while (at < path.length) {
    if (steps.length > 0 && path[at] === '.') {
      at++;
      if (path[at] === '.' || path[at] === '[' || at >= path.length) return undefined;
    }
    STEP.lastIndex = at;
    const m = STEP.exec(path);
    if (!m) return undefined;
    if (m[1] !== undefined) {
      // a name follows the start or a dot, never an index directly (`a[0]b`)
      if (steps.length > 0 && path[at - 1] !== '.') return undefined;
      steps.push(m[1]);
    } else {
      steps.push(Number(m[2]));
    }
    at = STEP.lastIndex;
  }
  return steps.length > 0 && typeof steps[0] === 'string' ? steps : undefined;
}

const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => v !== null && typeof v === 'object';

/** The value at `path` in `body`, or undefined when any step is missing. */
export function readAtPath(body: unknown, path: string): unknown {
  const steps = parseFieldPath(path);
  if (!steps) return undefined;
  let node: unknown = body;
  for (const step of steps) {
    if (!isContainer(node)) return undefined;
    if (typeof step === 'number' ? !Array.isArray(node) : Array.isArray(node)) return undefined;
    if (!Object.hasOwn(node, step)) return undefined;
    node = (node as Record<PathStep, unknown>)[step];
  }
  return node;
}

/**
 * Replaces the value at `path` with `value` when it is `expected` (the caller's URL); answers
 * whether it did. Nothing is created: a path that is not in the body leaves it as it is.
 */
export function replaceAtPath(body: Record<string, unknown>, path: string, expected: unknown, value: unknown): boolean {
  const steps = parseFieldPath(path);
  if (!steps) return false;
  let node: unknown = body;
  for (const [i, step] of steps.entries()) {
    if (!isContainer(node)) return false;
    if (typeof step === 'number' ? !Array.isArray(node) : Array.isArray(node)) return false;
    if (!Object.hasOwn(node, step)) return false;
    const container = node as Record<PathStep, unknown>;
    if (i === steps.length - 1) {
      if (container[step] !== expected) return false;
      container[step] = value;
      return true;
    }
    node = container[step];
  }
  return false;
}

/** Replaces every string equal to `expected` anywhere in `body` (keys untouched); answers how many. */
export function replaceEverywhere(body: unknown, expected: string, value: string): number {
  if (!isContainer(body)) return 0;
  let count = 0;
  const entries: Array<[PathStep, unknown]> = Array.isArray(body) ? body.map((v, i) => [i, v]) : Object.entries(body);
  for (const [k, v] of entries) {
    if (v === expected) {
      (body as Record<PathStep, unknown>)[k] = value;
      count++;
    } else {
      count += replaceEverywhere(v, expected, value);
    }
  }
  return count;
}
