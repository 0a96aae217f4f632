/**
 * The part of kustomize that deploy/kubernetes uses, for a test without kubectl (test-only): a
 * kustomization's `resources` (files and directories), `labels` (metadata only), `images`,
 * `configMapGenerator` / `secretGenerator` from env files (`behavior: merge` over a base's), and
 * strategic-merge `patches` (lists of named items merge by `name`, a null deletes a key,
 * `$patch: delete` removes the resource). Generated names keep no hash suffix. A secret env file
 * that is not there (it is never committed) is read from its `.example` beside it. Anything else in
 * a kustomization is refused, so the manifests cannot outgrow what this checks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

export type Doc = Record<string, any>;

const KNOWN = new Set(['apiVersion', 'kind', 'resources', 'labels', 'images', 'configMapGenerator', 'secretGenerator', 'patches']);

/** `KEY=value` lines of an env file (comments and blank lines skipped). */
export function readEnvFile(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    if (eq <= 0) throw new Error(`${file}: not KEY=value: ${t}`);
    out[t.slice(0, eq)] = t.slice(eq + 1);
  }
  return out;
}

export function readYamlDocs(file: string): Doc[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8'))
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
      return d.toJS() as Doc;
    })
    .filter((d) => d !== null);
}

const keyOf = (d: Doc): string => `${d.kind}/${d.metadata?.name}`;

function isNamedList(value: unknown): value is Doc[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => v && typeof v === 'object' && typeof v.name === 'string');
}

/** A strategic merge of `patch` into `base` (a new object). */
export function strategicMerge(base: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    if (isNamedList(base) && isNamedList(patch)) {
      const merged = base.map((item) => {
        const p = patch.find((x) => x.name === item.name);
        return p ? strategicMerge(item, p) : item;
      });
      return [...merged, ...patch.filter((p) => !base.some((item) => item.name === p.name))];
    }
    return patch;
  }
  if (base === null || typeof base !== 'object' || Array.isArray(base)) return strategicMerge({}, patch);
  const out: Doc = { ...(base as Doc) };
  for (const [k, v] of Object.entries(patch as Doc)) {
    if (v === null) delete out[k];
    else out[k] = k in out ? strategicMerge(out[k], v) : strategicMerge(undefined, v);
  }
  return out;
}

function generated(kind: 'ConfigMap' | 'Secret', dir: string, spec: Doc): Doc {
  const data: Record<string, string> = {};
  for (const env of spec.envs ?? []) {
    let file = path.join(dir, env);
    if (!fs.existsSync(file) && kind === 'Secret') file = `${file}.example`;
    Object.assign(data, readEnvFile(file));
  }
  return { apiVersion: 'v1', kind, metadata: { name: spec.name }, data, behavior: spec.behavior ?? 'create' };
}

/** Renders the kustomization in `dir`: the resources it makes, in order. */
export function kustomize(dir: string): Doc[] {
  const k = parse(fs.readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Doc;
  for (const key of Object.keys(k)) if (!KNOWN.has(key)) throw new Error(`${dir}: "${key}" is not understood by this renderer`);
  let docs: Doc[] = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    docs.push(...(fs.statSync(p).isDirectory() ? kustomize(p) : readYamlDocs(p)));
  }
  for (const [kind, list] of [
    ['ConfigMap', k.configMapGenerator],
    ['Secret', k.secretGenerator],
  ] as const) {
    for (const spec of list ?? []) {
      const made = generated(kind, dir, spec);
      const existing = docs.find((d) => keyOf(d) === keyOf(made));
      if (made.behavior === 'merge') {
        if (!existing) throw new Error(`${dir}: ${keyOf(made)} merges into nothing`);
        existing.data = { ...existing.data, ...made.data };
      } else {
        if (existing) throw new Error(`${dir}: ${keyOf(made)} made twice`);
        delete made.behavior;
        docs.push(made);
      }
    }
  }
  for (const { path: file } of k.patches ?? []) {
    for (const patch of readYamlDocs(path.join(dir, file))) {
      const i = docs.findIndex((d) => keyOf(d) === keyOf(patch));
      if (i < 0) throw new Error(`${dir}: patch ${file} matches no resource (${keyOf(patch)})`);
      if (patch.$patch === 'delete') docs = docs.filter((_, j) => j !== i);
      else docs[i] = strategicMerge(docs[i], patch) as Doc;
    }
  }
  for (const { pairs } of k.labels ?? []) {
    for (const d of docs) d.metadata = { ...d.metadata, labels: { ...d.metadata?.labels, ...pairs } };
  }
  for (const image of k.images ?? []) {
    for (const d of docs) {
      for (const c of d.spec?.template?.spec?.containers ?? []) {
        if (c.image === image.name) c.image = `${image.newName ?? image.name}:${image.newTag}`;
      }
    }
  }
  return docs;
}
