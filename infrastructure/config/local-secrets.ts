import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';

export const ADMIN_TOKEN_FILE = 'admin-token';
export const SECRETS_KEY_FILE = 'secrets.key';

/** What `withLocalSecrets` did, for the start-up banner and the log. */
export type LocalSecrets = Readonly<{
  cfg: Config;
  /** the admin token read from or written to the data directory (embedded start without ADMIN_TOKEN) */
  adminTokenFile: string | null;
  /** true when this call created the admin token file */
  adminTokenCreated: boolean;
  /** the secrets key file used (SECRETS_KEY unset) */
  secretsKeyFile: string | null;
}>;

const inMemory = (dir: string) => dir.startsWith('memory://');

/** Reads a one-line secret from `file`, or creates the file (mode 0600, owner only) with `make()`. */
function readOrCreate(file: string, make: () => string): { value: string; created: boolean } {
  try {
    const value = readFileSync(file, 'utf8').trim();
    if (value) return { value, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const value = make();
  try {
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // another process of the same deployment created it first: use theirs
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { value: readFileSync(file, 'utf8').trim(), created: false };
    throw err;
  }
  chmodSync(file, 0o600);
  return { value, created: true };
}

/**
 * Fills in the secrets a start needs and the operator did not configure (see docs/security.md):
 * - ADMIN_TOKEN: generated into `DATA_DIR/admin-token` on the embedded start (no DATABASE_URL). With a server
 *   database it stays unset, and the admin and sandbox routes refuse every request until it is set.
 * - SECRETS_KEY (keys the sign-up code hashes and encrypts webhook signing secrets): generated into
 *   `DATA_DIR/secrets.key` in either mode; processes on other hosts must be given the same SECRETS_KEY.
 * Nothing is written for an in-memory data directory (tests), where the container uses a per-process key.
 */
export function withLocalSecrets(cfg: Config): LocalSecrets {
  if (inMemory(cfg.DATA_DIR)) return { cfg, adminTokenFile: null, adminTokenCreated: false, secretsKeyFile: null };
  const out: Config = { ...cfg };
  let adminTokenFile: string | null = null;
  let adminTokenCreated = false;
  let secretsKeyFile: string | null = null;
  const needAdmin = !cfg.ADMIN_TOKEN && !cfg.DATABASE_URL;
  if (needAdmin || !cfg.SECRETS_KEY) mkdirSync(cfg.DATA_DIR, { recursive: true, mode: 0o700 });
  if (needAdmin) {
    adminTokenFile = join(cfg.DATA_DIR, ADMIN_TOKEN_FILE);
    const r = readOrCreate(adminTokenFile, () => `adm_${randomBytes(32).toString('base64url')}`);
    out.ADMIN_TOKEN = r.value;
    adminTokenCreated = r.created;
  }
  if (!cfg.SECRETS_KEY) {
    secretsKeyFile = join(cfg.DATA_DIR, SECRETS_KEY_FILE);
    out.SECRETS_KEY = readOrCreate(secretsKeyFile, () => randomBytes(32).toString('base64url')).value;
  }
  return { cfg: out, adminTokenFile, adminTokenCreated, secretsKeyFile };
}
