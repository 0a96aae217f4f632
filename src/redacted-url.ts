/** A service URL for messages and logs: its password replaced by `***`; `setting` when it cannot be parsed. */
export function redactedUrl(url: string, setting: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return setting;
  }
}
