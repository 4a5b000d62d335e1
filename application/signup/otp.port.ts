/** One-time codes for sign-up: random 6-digit codes, stored only as hashes bound to their verification id. */
export interface OtpPort {
  generate(): string;
  hash(verificationId: string, code: string): string;
}
