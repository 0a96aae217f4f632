/** Helpers for plugins that attach hooks to chosen routes from an `onRoute` hook. */

/** A route option that may hold one hook or several, as a list. */
export function hookList<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Whether the route answers `method` (routes may list several). */
export function routeHasMethod(route: { method: string | string[] }, method: string): boolean {
  return Array.isArray(route.method) ? route.method.includes(method) : route.method === method;
}
