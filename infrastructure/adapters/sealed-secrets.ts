import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const SEALED = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Secrets sealed at rest with AES-256-GCM under a key derived from SECRETS_KEY (docs/security.md#secrets-at-rest-secrets_key):
 * `enc:v1:` + base64url of iv, tag and ciphertext, so a database dump alone does not give them away. Each use has
 * its own derived key (webhook signing secrets, chat platform access tokens). A value without the prefix was stored
 * before sealing existed and is returned as it is.
 */
export class AesGcmSealer {
  constructor(
    private readonly key: Buffer,
    /** what is sealed, for the error when the key is not the one it was sealed with */
    private readonly what: string,
  ) {
    if (key.length !== 32) throw new Error(`the ${what} key must be 32 bytes`);
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${SEALED}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(stored: string): string {
    if (!stored.startsWith(SEALED)) return stored;
    const raw = Buffer.from(stored.slice(SEALED.length), 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`cannot open a ${this.what}: SECRETS_KEY is not the key it was sealed with`);
    }
  }
}
