import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config-error.js';
import { readSettings } from './read-settings.js';
import type { Setting } from './setting.js';
import { SETTINGS } from './table.js';

const ROWS = Object.entries(SETTINGS as Record<string, Setting<unknown>>);
const ROOT = path.join(import.meta.dirname, '..', '..');

describe('the settings table (G290)', () => {
  it('every row is an environment variable the reference can describe', () => {
    expect(ROWS.length).toBeGreaterThan(70);
    for (const [name, row] of ROWS) {
      expect(name, name).toMatch(/^[A-Z][A-Z0-9_]*[A-Z0-9]$/);
      for (const field of ['group', 'type', 'default', 'description'] as const) expect(row[field], `${name}.${field}`).not.toBe('');
      if (row.readBy !== undefined) expect(fs.existsSync(path.join(ROOT, row.readBy)), `${name}: readBy ${row.readBy}`).toBe(true);
    }
  });

  it('reads every row with nothing set, each dependency first', () => {
    const values = readSettings({});
    expect(Object.keys(values).sort()).toEqual(ROWS.map(([name]) => name).sort());
    expect(values).toMatchObject({ PORT: 8790, MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: 4, MEDIAGATE_RATE_LIMIT: 'on', MEDIAGATE_S3_BUCKET: undefined });
  });

  it('an empty value is the default, for every row', () => {
    const empty = Object.fromEntries(ROWS.map(([name]) => [name, '']));
    expect(readSettings(empty)).toEqual(readSettings({}));
  });

  it('every value is checked at start, also one the rest of the configuration leaves unused', () => {
    expect(() => readSettings({ MEDIAGATE_RATE_LIMIT: 'off', MEDIAGATE_RATE_LIMIT_SUBMITS: 'lots' })).toThrow(ConfigError);
    expect(() => readSettings({ MEDIAGATE_RATE_LIMIT: 'off', MEDIAGATE_RATE_LIMIT_SUBMITS: 'lots' })).toThrow(
      /^MEDIAGATE_RATE_LIMIT_SUBMITS: must be a whole number/,
    );
  });

  it('a bound that follows another setting is read from its value', () => {
    expect(readSettings({ MEDIAGATE_MEDIA_REVIEW_SLOTS: '2' }).MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS).toBe(2);
    expect(() => readSettings({ MEDIAGATE_MEDIA_REVIEW_SLOTS: '2', MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: '3' })).toThrow(
      'MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: must be between 1 and 2, got 3',
    );
  });
});
