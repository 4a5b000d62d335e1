import { randomBytes } from 'node:crypto';
import { injectable } from 'inversify';
import type { WebhookSecretsPort } from '../../application/webhooks/webhook.port.js';

/** `whsec_` + 32 random bytes (base64url). A new one on every create-or-update (spec 2.7). */
@injectable()
export class RandomWebhookSecrets implements WebhookSecretsPort {
  generate(): string {
    return `whsec_${randomBytes(32).toString('base64url')}`;
  }
}
