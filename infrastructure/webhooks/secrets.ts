import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { WebhookSecretsPort } from '../../application/webhooks/webhook.port.js';

const SEALED = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Webhook signing secrets: `whsec_` + 32 random bytes (base64url), a new one on every create-or-update.
 * Events and read-model rows hold them sealed with AES-256-GCM under a key derived from SECRETS_KEY
 * (`enc:v1:` + base64url of iv, tag and ciphertext), so a database dump alone cannot forge deliveries; they
 * are opened only to show them to their owner and to sign (docs/security.md). A value without the prefix
 * was stored before sealing existed and is returned as it is.
 */
export class RandomWebhookSecrets implements WebhookSecretsPort {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the webhook secret key must be 32 bytes');
  }

  generate(): string {
    return `whsec_${randomBytes(32).toString('base64url')}`;
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
      throw new Error('cannot open a webhook secret: SECRETS_KEY is not the key it was sealed with');
    }
  }
}
