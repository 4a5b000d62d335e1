import { createHash, randomInt } from 'node:crypto';
import { injectable } from 'inversify';
import type { OtpPort } from '../../application/signup/otp.port.js';

/**
 * A 6-digit code from the CSPRNG; stored as SHA-256 over `verificationId:code`. Six digits are weak against
 * an offline search, which is why the code also expires after 10 minutes and allows 5 wrong tries.
 */
@injectable()
export class RandomOtp implements OtpPort {
  generate(): string {
    return String(randomInt(0, 1_000_000)).padStart(6, '0');
  }
  hash(verificationId: string, code: string): string {
    return createHash('sha256').update(`${verificationId}:${code}`, 'utf8').digest('hex');
  }
}
