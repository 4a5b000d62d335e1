import { createHash, randomBytes } from 'node:crypto';
import { injectable } from 'inversify';
import type { ApiKeySecretsPort } from '../../application/accounts/api-key-secrets.port.js';

export const KEY_PREFIX = 'avp_';

/**
 * Keys are 32 random bytes (base64url) behind a fixed prefix; only their SHA-256 is stored. A fast hash is
 * right here: the key has 256 bits of entropy, so there is nothing to brute-force, and auth stays cheap.
 */
@injectable()
export class Sha256ApiKeySecrets implements ApiKeySecretsPort {
  generate() {
    const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    return { key, prefix: key.slice(0, KEY_PREFIX.length + 6), hash: this.hash(key) };
  }
  hash(key: string): string {
    return createHash('sha256').update(key, 'utf8').digest('hex');
  }
}
