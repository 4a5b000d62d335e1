import { createHmac, randomInt } from 'node:crypto';
import type { OtpPort } from '../../application/signup/otp.port.js';

/**
 * A 6-digit code from the CSPRNG; stored as HMAC-SHA-256 over `verificationId:code`, keyed with a server
 * secret kept outside the database (derived from SECRETS_KEY, docs/security.md). Without the key a database
 * dump does not reveal the codes; the 10-minute expiry and the 5-try lock-out bound online guessing.
 */
export class RandomOtp implements OtpPort {
  constructor(private readonly key: Buffer) {}

  generate(): string {
    return String(randomInt(0, 1_000_000)).padStart(6, '0');
  }
  hash(verificationId: string, code: string): string {
    return createHmac('sha256', this.key).update(`${verificationId}:${code}`, 'utf8').digest('hex');
  }
}
