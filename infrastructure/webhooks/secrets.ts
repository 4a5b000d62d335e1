import { randomBytes } from 'node:crypto';
import type { WebhookSecretsPort } from '../../application/webhooks/webhook.port.js';
import { AesGcmSealer } from '../adapters/sealed-secrets.js';

/**
 * Webhook signing secrets: `whsec_` + 32 random bytes (base64url), a new one on every create-or-update.
 * Events and read-model rows hold them sealed (AesGcmSealer, under a key derived from SECRETS_KEY), so a database
 * dump alone cannot forge deliveries; they are opened only to show them to their owner and to sign
 * (docs/security.md). A value without the prefix was stored before sealing existed and is returned as it is.
 */
export class RandomWebhookSecrets implements WebhookSecretsPort {
  private readonly sealer: AesGcmSealer;

  constructor(key: Buffer) {
    this.sealer = new AesGcmSealer(key, 'webhook secret');
  }

  generate(): string {
    return `whsec_${randomBytes(32).toString('base64url')}`;
  }

  seal(plain: string): string {
    return this.sealer.seal(plain);
  }

  open(stored: string): string {
    return this.sealer.open(stored);
  }
}
