import { hkdfSync, randomBytes } from 'node:crypto';

/** Keys derived from SECRETS_KEY, one per purpose, so that no two uses share key material (docs/security.md). */
export type SecretKeys = Readonly<{
  signUpCodes: Buffer;
  webhookSecrets: Buffer;
  recordingUrls: Buffer;
  chatappTokens: Buffer;
  sipCredentials: Buffer;
  sipNonces: Buffer;
}>;

// Only when SECRETS_KEY is unset, which the start-up avoids by generating a key file (in-memory tests): such
// a key lives as long as the process, like the data it protects.
const perProcess = randomBytes(32).toString('base64url');

export function secretKeys(secretsKey: string | undefined): SecretKeys {
  const ikm = Buffer.from(secretsKey ?? perProcess, 'utf8');
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', ikm, 'agent-platform', purpose, 32));
  return {
    signUpCodes: derive('sign-up code hash v1'),
    webhookSecrets: derive('webhook secret seal v1'),
    recordingUrls: derive('recording url signature v1'),
    chatappTokens: derive('chat platform access token seal v1'),
    sipCredentials: derive('sip carrier credential seal v1'),
    sipNonces: derive('sip digest nonce v1'),
  };
}
