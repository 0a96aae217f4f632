import fs from 'node:fs';
import path from 'node:path';

/** Every entry under `roots` (recursively, symlinks not followed) with its kind, size and mtime; a missing root is recorded as such. */
export function snapshotTree(roots: readonly string[], skip: readonly string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  const skipped = new Set(skip.map((p) => path.resolve(p)));
  const walk = (p: string): void => {
    if (skipped.has(p)) return;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      out.set(p, 'absent');
      return;
    }
    if (st.isDirectory()) {
      out.set(p, 'dir');
      for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    } else {
      out.set(p, `${st.isSymbolicLink() ? 'link' : 'file'}:${st.size}:${st.mtimeMs}`);
    }
  };
  for (const root of roots) walk(path.resolve(root));
  return out;
}

/** What changed between two snapshots: `+ path` added, `- path` removed, `~ path` modified. */
export function treeChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [p, v] of after) {
    const was = before.get(p);
    if (was === undefined || (was === 'absent' && v !== 'absent')) changes.push(`+ ${p}`);
    else if (v === 'absent' && was !== 'absent') changes.push(`- ${p}`);
    else if (was !== v && v !== 'dir') changes.push(`~ ${p}`);
  }
  for (const p of before.keys()) if (!after.has(p)) changes.push(`- ${p}`);
  return changes.sort();
}
