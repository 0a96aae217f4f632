/**
 * The deployment files agree with the gateway and with each other (issue 28, G344-G347), without
 * Docker or kubectl: the Dockerfile, compose.yaml and compose.scale-out.yaml (with .env.example),
 * and deploy/kubernetes rendered by test/helpers/kustomize.ts (base and scale-out overlay).
 * - Every MEDIAGATE_* setting they give a gateway is one the gateway reads: loadConfig is run on
 *   each container's environment through a proxy that records what it reads (secrets left empty in
 *   the examples are given valid stand-ins), so a misspelt name fails, and so does a bad value.
 * - Every health check and probe asks a path a gateway of that role answers 200 (asked of a real
 *   gateway built for the role), on the port it listens on; the Service, the Ingress, EXPOSE and the
 *   published ports agree with it.
 * - Non-root, read-only root filesystem, a stop grace above MEDIAGATE_SHUTDOWN_GRACE_SECONDS.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { SETTINGS } from '../../../src/settings/table.js';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { type Doc, kustomize, readEnvFile } from '../../helpers/kustomize.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');
const IMAGE_UID = 10001;

/** Stand-ins for secrets the examples leave empty, in the shape the gateway checks. */
const STAND_INS: Record<string, string> = {
  MEDIAGATE_DATABASE_URL: 'postgres://mediagate:pw@postgres:5432/mediagate',
  MEDIAGATE_REDIS_URL: 'redis://:pw@redis:6379/0',
  MEDIAGATE_SIGNING_SECRET: 's'.repeat(40),
  MEDIAGATE_BOOTSTRAP_KEY: 'k'.repeat(24),
};
const filled = (env: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === '' ? (STAND_INS[k] ?? 'stand-in') : v]));

/** The names loadConfig reads from `env` (it must accept it: a bad value throws here). */
function settingsRead(env: Record<string, string>): Set<string> {
  const names = new Set<string>();
  loadConfig(
    new Proxy(env, {
      get(target, key) {
        if (typeof key === 'string') names.add(key);
        return target[key as string];
      },
    }),
  );
  return names;
}

/** The gateway settings in `env` (MEDIAGATE_*, PORT, HOST) that loadConfig does not read or the settings reference (the table) lacks. */
function unknownSettings(env: Record<string, string>): string[] {
  const names = settingsRead(env);
  return Object.keys(env).filter((k) => (k.startsWith('MEDIAGATE_') || k === 'PORT' || k === 'HOST') && (!names.has(k) || !(k in SETTINGS)));
}

/** `serve --role X` as the environment the gateway then reads. */
function roleOf(args: string[]): 'api' | 'worker' | 'all' {
  expect(args.slice(0, 1)).toEqual(['serve']);
  const i = args.indexOf('--role');
  return (i < 0 ? 'all' : args[i + 1]) as 'api' | 'worker' | 'all';
}

/** The path of a `node -e fetch('http://127.0.0.1:PORT/PATH')` health check, and its port. */
function fetchCheck(command: string): { port: string; path: string } {
  const m = /fetch\('http:\/\/127\.0\.0\.1:'?\+?\(?(?:process\.env\.PORT\|\|)?(\d+)\)?\+?'?(\/[a-z]+)'\)/.exec(command);
  expect(m, command).not.toBeNull();
  return { port: m![1]!, path: m![2]! };
}

// Gateways of each role, to ask the paths the checks ask.
const gateways: Partial<Record<'api' | 'worker' | 'all', Harness>> = {};
beforeAll(async () => {
  for (const role of ['api', 'worker', 'all'] as const)
    gateways[role] = await createHarness({ env: { MEDIAGATE_ROLE: role, MEDIAGATE_MIN_FREE_DISK_MB: '0' } });
});
afterAll(async () => {
  for (const h of Object.values(gateways)) await h?.close();
});

async function answers(role: 'api' | 'worker' | 'all', url: string): Promise<number> {
  return (await gateways[role]!.app.inject({ method: 'GET', url })).statusCode;
}

describe('Dockerfile (G347)', () => {
  const dockerfile = read('Dockerfile');
  const lines = dockerfile.split('\n');

  it('runs FROM node:20-bookworm-slim as uid 10001, exposes the default port, checks /readyz without curl, starts under tini', async () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    const froms = lines.filter((l) => l.startsWith('FROM '));
    expect(froms.at(-1)).toBe(`FROM ${'$'}{NODE_IMAGE}`);
    expect(lines).toContain(`USER ${IMAGE_UID}:${IMAGE_UID}`);
    expect(lines).toContain(`EXPOSE ${loadConfig({}).port}`);
    expect(dockerfile).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(dockerfile).toMatch(/MEDIAGATE_DATA_DIR=\/data/);
    const check = fetchCheck(dockerfile.slice(dockerfile.indexOf('HEALTHCHECK')));
    expect(check.port).toBe(String(loadConfig({}).port));
    expect(await answers('all', check.path)).toBe(200);
    expect(dockerfile.slice(dockerfile.indexOf('HEALTHCHECK'), dockerfile.indexOf('STOPSIGNAL'))).not.toMatch(/CMD.*(curl|wget)/s);
    expect(lines).toContain('ENTRYPOINT ["/usr/bin/tini", "--", "mediagate"]');
  });

  it('labels the image with the version of package.json', () => {
    const version = JSON.parse(read('package.json')).version as string;
    expect(lines).toContain(`ARG VERSION=${version}`);
    for (const [label, arg] of [
      ['version', 'VERSION'],
      ['source', 'SOURCE_URL'],
      ['revision', 'REVISION'],
    ]) {
      expect(dockerfile).toContain(`org.opencontainers.image.${label}="$${'{'}${arg}}"`);
    }
  });

  it('.dockerignore sends only what the build copies', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(ignore[0]).toBe('*');
    for (const copied of ['package.json', 'package-lock.json', 'src/', 'bin/', 'packages/client/src/']) expect(ignore).toContain(`!${copied}`);
  });
});

describe('compose (G344-G346)', () => {
  const example = readEnvFile(path.join(ROOT, '.env.example'));
  const vars = filled(example);
  const used = new Set<string>();

  /** Compose's interpolation of one value with the .env values; records the variables used. */
  function interpolate(value: string): string {
    return value.replace(/\$\$|\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
      if (whole === '$$') return '$';
      used.add(name!);
      const v = vars[name!];
      if (op?.endsWith('-')) return v === undefined || (op === ':-' && v === '') ? arg! : v;
      if (op?.endsWith('?') && (v === undefined || v === '')) throw new Error(`${name} is required: ${arg}`);
      return v ?? '';
    });
  }
  const interpolated = (value: unknown): any => {
    if (typeof value === 'string') return interpolate(value);
    if (Array.isArray(value)) return value.map(interpolated);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolated(v)]));
    return value;
  };
  const compose = (file: string): Doc => interpolated(parse(read(file), { merge: true })) as Doc;
  const single = compose('compose.yaml');
  const scaled = compose('compose.scale-out.yaml');
  const gatewayServices = (c: Doc): Array<[string, Doc]> => Object.entries(c.services as Record<string, Doc>).filter(([, s]) => s.build !== undefined);

  it('every MEDIAGATE_* setting given to a gateway is read by it, and accepted', () => {
    for (const c of [single, scaled]) {
      for (const [name, service] of gatewayServices(c)) {
        const env = { ...service.environment, MEDIAGATE_ROLE: roleOf(service.command) } as Record<string, string>;
        expect(unknownSettings(env), name).toEqual([]);
      }
    }
  });

  it('the gateways: non-root, read-only with /tmp in memory, a stop grace above the shutdown grace, healthchecked on a path their role answers', async () => {
    for (const c of [single, scaled]) {
      for (const [name, service] of gatewayServices(c)) {
        expect(service.user, name).toBe(`${IMAGE_UID}:${IMAGE_UID}`);
        expect(service.read_only, name).toBe(true);
        expect(service.tmpfs, name).toContain('/tmp');
        expect(service.cap_drop, name).toEqual(['ALL']);
        const grace = loadConfig(service.environment).shutdownGraceMs / 1000;
        expect(Number(/^(\d+)s$/.exec(service.stop_grace_period)![1]), name).toBeGreaterThan(grace);
        const check = fetchCheck(service.healthcheck.test.join(' '));
        expect(check.port).toBe(String(loadConfig(service.environment).port));
        expect(await answers(roleOf(service.command), check.path), name).toBe(200);
      }
    }
  });

  it('the embedded stack: one gateway of every role with its /data on a volume, published on its port', () => {
    const [[, gateway]] = gatewayServices(single) as [[string, Doc]];
    expect(Object.keys(single.services)).toEqual(['mediagate']);
    expect(roleOf(gateway.command)).toBe('all');
    expect(gateway.volumes).toEqual(['data:/data']);
    expect(gateway.ports).toEqual([`${example.PUBLISH_PORT}:${loadConfig(gateway.environment).port}`]);
  });

  it('the scale-out stack: 2 API + 1 worker on PostgreSQL, Redis and the bucket, started once those are healthy, behind nginx', () => {
    const { api, worker, lb } = scaled.services as Record<string, Doc>;
    expect([roleOf(api!.command), api!.deploy.replicas, roleOf(worker!.command), worker!.deploy.replicas]).toEqual(['api', 2, 'worker', 1]);
    for (const g of [api!, worker!]) {
      const config = loadConfig(g.environment);
      expect(config.databaseUrl).toMatch(/@postgres:5432\//);
      expect(config.redisUrl).toMatch(/@redis:6379\//);
      expect(config.s3).toMatchObject({ bucket: 'mediagate', endpoint: 'http://minio:9000', createBucket: true });
      expect(config.signingSecret).toBeDefined(); // every process signs result URLs alike
      expect(g.depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        minio: { condition: 'service_healthy' },
      });
    }
    for (const [name, service] of Object.entries(scaled.services as Record<string, Doc>)) expect(service.healthcheck, name).toBeDefined();
    expect(lb!.depends_on).toEqual({ api: { condition: 'service_healthy' } });
    expect(lb!.ports).toEqual([`${example.PUBLISH_PORT}:8080`]);
    const nginx = read(lb!.volumes[0].split(':')[0]);
    expect(nginx).toMatch(/listen 8080;/);
    expect(nginx).toContain(`set $api http://api:${loadConfig(api!.environment).port};`);
    expect(lb!.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8080/healthz');
  });

  it('.env.example names every variable the compose files use, and nothing else', () => {
    expect([...used].sort()).toEqual(Object.keys(example).sort());
    expect(read('.gitignore').split('\n')).toContain('.env');
  });
});

describe('Kubernetes (G344, G345)', () => {
  const base = kustomize(path.join(ROOT, 'deploy/kubernetes/base'));
  const scaleOut = kustomize(path.join(ROOT, 'deploy/kubernetes/overlays/scale-out'));
  const of = (docs: Doc[], kind: string): Doc[] => docs.filter((d) => d.kind === kind);
  const named = (docs: Doc[], kind: string, name: string): Doc => docs.find((d) => d.kind === kind && d.metadata.name === name)!;

  /** A Deployment's container environment: its ConfigMap and Secret, secrets left empty in the examples given stand-ins, its role. */
  function environmentOf(docs: Doc[], deployment: Doc): Record<string, string> {
    const [container] = deployment.spec.template.spec.containers as Doc[];
    const env: Record<string, string> = {};
    for (const from of container!.envFrom) {
      const source = from.configMapRef ? named(docs, 'ConfigMap', from.configMapRef.name) : named(docs, 'Secret', from.secretRef.name);
      expect(source, JSON.stringify(from)).toBeDefined();
      Object.assign(env, source.data);
    }
    for (const e of container!.env ?? []) env[e.name] = e.value;
    return { ...filled(env), MEDIAGATE_ROLE: roleOf(container!.args) };
  }

  it('renders: base = one pod of every role on a claim; scale-out = API pods (HPA, PDB, Ingress) and worker pods, no claim', () => {
    const kinds = (docs: Doc[]) => docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();
    expect(kinds(base)).toEqual([
      'ConfigMap/mediagate-config',
      'Deployment/mediagate-api',
      'PersistentVolumeClaim/mediagate-data',
      'Secret/mediagate-secrets',
      'Service/mediagate',
    ]);
    expect(kinds(scaleOut)).toEqual([
      'ConfigMap/mediagate-config',
      'Deployment/mediagate-api',
      'Deployment/mediagate-worker',
      'HorizontalPodAutoscaler/mediagate-api',
      'Ingress/mediagate',
      'PodDisruptionBudget/mediagate-api',
      'PodDisruptionBudget/mediagate-worker',
      'Secret/mediagate-secrets',
      'Service/mediagate',
    ]);
    const api = named(base, 'Deployment', 'mediagate-api');
    expect([roleOf(api.spec.template.spec.containers[0].args), api.spec.replicas, api.spec.strategy.type]).toEqual(['all', 1, 'Recreate']);
    // SQLite in a ReadWriteOnce claim: one pod, the old one gone before the new one starts
    expect(loadConfig(environmentOf(base, api)).databaseUrl).toBeUndefined();
    const apiOut = named(scaleOut, 'Deployment', 'mediagate-api');
    expect([roleOf(apiOut.spec.template.spec.containers[0].args), apiOut.spec.replicas, apiOut.spec.strategy.rollingUpdate]).toEqual([
      'api',
      2,
      { maxUnavailable: 0, maxSurge: 1 },
    ]);
    expect(apiOut.spec.template.spec.volumes.find((v: Doc) => v.name === 'data')).toEqual({ name: 'data', emptyDir: { sizeLimit: '10Gi' } });
    expect(roleOf(named(scaleOut, 'Deployment', 'mediagate-worker').spec.template.spec.containers[0].args)).toBe('worker');
  });

  it('every MEDIAGATE_* setting a pod gets is read by the gateway, and accepted; scale-out pods share PostgreSQL, the bucket and the signing secret', () => {
    for (const docs of [base, scaleOut]) {
      for (const d of of(docs, 'Deployment')) expect(unknownSettings(environmentOf(docs, d)), d.metadata.name).toEqual([]);
    }
    for (const d of of(scaleOut, 'Deployment')) {
      const config = loadConfig(environmentOf(scaleOut, d));
      expect(config.databaseUrl, d.metadata.name).toBeDefined();
      expect(config.s3, d.metadata.name).toMatchObject({ createBucket: true });
      expect(config.signingSecret, d.metadata.name).toBeDefined();
    }
  });

  it("probes ask paths a gateway of the pod's role answers, on the port it listens on; Service and Ingress reach that port", async () => {
    for (const docs of [base, scaleOut]) {
      for (const d of of(docs, 'Deployment')) {
        const [c] = d.spec.template.spec.containers as Doc[];
        const env = environmentOf(docs, d);
        const port = c!.ports.find((p: Doc) => p.name === 'http');
        expect(port.containerPort).toBe(loadConfig(env).port);
        for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
          const get = c![probe].httpGet;
          expect(get.port, `${d.metadata.name} ${probe}`).toBe('http');
          expect(await answers(env.MEDIAGATE_ROLE as 'api', get.path), `${d.metadata.name} ${probe} ${get.path}`).toBe(200);
        }
      }
      const service = named(docs, 'Service', 'mediagate');
      const selected = of(docs, 'Deployment').filter((d) => Object.entries(service.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v));
      expect(selected.map((d) => d.metadata.name)).toEqual(['mediagate-api']);
      expect(service.spec.ports).toEqual([{ name: 'http', port: 8790, targetPort: 'http' }]);
    }
    const backend = named(scaleOut, 'Ingress', 'mediagate').spec.rules[0].http.paths[0].backend.service;
    expect(backend).toEqual({ name: 'mediagate', port: { name: 'http' } });
  });

  it("pods: non-root (the image's uid), read-only root filesystem, no privilege escalation, a termination grace above the shutdown grace and preStop pause", () => {
    for (const docs of [base, scaleOut]) {
      for (const d of of(docs, 'Deployment')) {
        const pod = d.spec.template.spec;
        expect(pod.securityContext, d.metadata.name).toMatchObject({ runAsNonRoot: true, runAsUser: IMAGE_UID, runAsGroup: IMAGE_UID });
        for (const c of pod.containers as Doc[]) {
          expect(c.securityContext, d.metadata.name).toEqual({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          });
          expect(c.volumeMounts.map((m: Doc) => m.mountPath).sort()).toEqual(['/data', '/tmp']);
          const pause = Number(c.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
          const grace = loadConfig(environmentOf(docs, d)).shutdownGraceMs / 1000;
          expect(pod.terminationGracePeriodSeconds, d.metadata.name).toBeGreaterThan(grace + pause);
        }
      }
    }
  });

  it('the HPA scales the API Deployment by CPU (its pods request CPU); each PDB selects the pods of one Deployment', () => {
    const hpa = named(scaleOut, 'HorizontalPodAutoscaler', 'mediagate-api');
    const target = named(scaleOut, 'Deployment', hpa.spec.scaleTargetRef.name);
    expect(target.spec.template.spec.containers[0].resources.requests.cpu).toBeDefined();
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    for (const pdb of of(scaleOut, 'PodDisruptionBudget')) {
      const selected = of(scaleOut, 'Deployment').filter((d) =>
        Object.entries(pdb.spec.selector.matchLabels).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
      );
      expect(
        selected.map((d) => d.metadata.name),
        pdb.metadata.name,
      ).toEqual([pdb.metadata.name]);
    }
  });

  it('no secret is committed: secrets.env files are ignored, only their examples are in the repository', () => {
    expect(read('.gitignore').split('\n')).toContain('secrets.env');
    for (const dir of ['deploy/kubernetes/base', 'deploy/kubernetes/overlays/scale-out']) {
      expect(Object.values(readEnvFile(path.join(ROOT, dir, 'secrets.env.example'))).every((v) => v === '')).toBe(true);
    }
  });
});
