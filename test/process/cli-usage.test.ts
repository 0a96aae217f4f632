import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUnavailable } from '../helpers/postgres.js';
import { POSTGRES_ADMIN_URL } from '../helpers/postgres-url.js';
import { tempDir } from '../helpers/temp-root.js';
import { freePort } from '../helpers/listening-gateway.js';
import { ensureBuilt, runCliAsync } from '../helpers/process.js';

// The `mediagate` command as an operator meets it (G458): the usage asked for is an answer (stdout,
// exit 0) and a mistake gets it on stderr (exit 2); a fault of the system (a port taken, a folder
// that does not exist) is one line naming it and exit 1, never a stack trace.
let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = tempDir('mediagate-cli-usage-');
}, 240_000);
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const STACK = /^\s+at /m;
const postgresDown = await postgresUnavailable();

describe('the usage', () => {
  it('--help, -h and help print it on stdout and exit 0, after any command too (client commands included)', async () => {
    const asked = [
      ['--help'],
      ['-h'],
      ['help'],
      ['keys', '--help'],
      ['credits', 'grant', '-h'],
      ['serve', '--help'],
      ['generate', 'image', '-h'],
      ['tasks', 'list', '--help'],
    ];
    const results = await Promise.all(asked.map((args) => runCliAsync(args, { MEDIAGATE_DATA_DIR: dir })));
    results.forEach((r, i) => {
      expect(r.status, asked[i]!.join(' ')).toBe(0);
      expect(r.stdout, asked[i]!.join(' ')).toMatch(/^Usage: mediagate /);
      expect(r.stderr, asked[i]!.join(' ')).toBe('');
    });
    expect(results[0]!.stdout).toContain('generate image|video'); // the whole command, client commands included
  });

  it('an unknown command prints it on stderr, nothing on stdout, exit 2', async () => {
    const r = await runCliAsync(['frobnicate'], { MEDIAGATE_DATA_DIR: dir });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Usage: mediagate /);
  });
});

describe('faults of the system: one line, exit 1', () => {
  it('backup into a folder that does not exist', async () => {
    const target = path.join(dir, 'no-such-folder', 'copy.db');
    const r = await runCliAsync(['backup', target], { MEDIAGATE_DATA_DIR: dir });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^mediagate: backup could not write ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*directory does not exist\\n$`));
    expect(r.stderr).not.toMatch(STACK);
  });

  it('serve on a port another process listens on', async () => {
    const port = await freePort();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const r = await runCliAsync(['serve'], { MEDIAGATE_DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1' });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`EADDRINUSE: address already in use 127.0.0.1:${port}`);
      expect(r.stderr).toContain('set PORT to a free port');
      expect(r.stderr).not.toMatch(STACK);
    } finally {
      holder.close();
    }
  });
});

describe('a PostgreSQL store that cannot be reached (G472)', () => {
  it('an operator command says so in one line, its password redacted, exit 1', async () => {
    const port = await freePort(); // nothing listens there
    const r = await runCliAsync(['keys', 'list'], {
      MEDIAGATE_DATA_DIR: dir,
      MEDIAGATE_DATABASE_URL: `postgres://ops:hunter2secret@127.0.0.1:${port}/mediagate`,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^mediagate: could not open the PostgreSQL store at postgres://ops:\\*\\*\\*@127\\.0\\.0\\.1:${port}/mediagate: .*ECONNREFUSED.*\\n$`),
    );
    expect(r.stderr).not.toContain('hunter2secret');
    expect(r.stderr).not.toMatch(STACK);
  });

  it.skipIf(postgresDown !== undefined)('a database the server refuses (it does not exist) is said in one line too, exit 1 (G477)', async () => {
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = '/mediagate_no_such_database';
    const r = await runCliAsync(['keys', 'list'], { MEDIAGATE_DATA_DIR: dir, MEDIAGATE_DATABASE_URL: url.toString() });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^mediagate: could not open the PostgreSQL store at postgres:\/\/[^ ]+\/mediagate_no_such_database: database "mediagate_no_such_database" does not exist\n$/,
    );
    expect(r.stderr).not.toMatch(STACK);
  });

  it('backup says to use pg_dump without opening the database', async () => {
    const port = await freePort();
    const r = await runCliAsync(['backup', path.join(dir, 'pg-copy.db')], {
      MEDIAGATE_DATA_DIR: dir,
      MEDIAGATE_DATABASE_URL: `postgres://ops:hunter2secret@127.0.0.1:${port}/mediagate`,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('backup copies the embedded SQLite database; this gateway uses PostgreSQL (MEDIAGATE_DATABASE_URL): back it up with pg_dump\n');
  });
});
