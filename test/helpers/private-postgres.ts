/**
 * A PostgreSQL server of the test's own (initdb into a temp folder, started on a free port), for
 * fault tests that stop or restart the database: the machine's shared server is never touched.
 * Run as the `postgres` user when the tests run as root (initdb refuses root). When the server
 * binaries are missing the tests that need one are skipped with the reason, except under
 * MEDIAGATE_TEST_REQUIRE_POSTGRES=1 (CI), where that is a failure.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** Stops the server (`-m fast`: sessions are ended) and starts it again on the same port and data. */
  restart(): void;
  /** Stops it for good and removes its folder. */
  stop(): void;
}

/** The folder of the newest installed server's binaries, or undefined. */
function serverBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? undefined : path.join(root, newest, 'bin');
}

const asRoot = process.getuid?.() === 0;

/** Why no private server can be made here (undefined when it can); throws instead when CI requires it. */
export function privatePostgresUnavailable(): string | undefined {
  let reason: string | undefined;
  if (!serverBinaries()) reason = 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  else if (asRoot && !fs.existsSync('/usr/sbin/runuser') && !fs.existsSync('/sbin/runuser')) reason = 'running as root without runuser (initdb refuses root)';
  if (reason && process.env.MEDIAGATE_TEST_REQUIRE_POSTGRES === '1') throw new Error(`${reason}; MEDIAGATE_TEST_REQUIRE_POSTGRES=1 requires it`);
  if (reason) console.warn(`skipping the private PostgreSQL tests: ${reason}`);
  return reason;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = serverBinaries()!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediagate-pg-'));
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (tool: string, args: string[]): void => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]] : [path.join(bin, tool), args];
    // no pipes: the server pg_ctl starts would hold them open, and this call would wait for their end
    execFileSync(file, argv, { stdio: 'ignore', timeout: 60_000 });
  };
  const port = await freePort();
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  // fsync off: a test database, thrown away; the socket goes in the folder, not /var/run
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () => run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-m', 'fast', '-w', 'restart']),
    stop: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
