/** Generates API keys and hashes them; the plain key never reaches the event store or the read model. */
export interface ApiKeySecretsPort {
  generate(): { key: string; prefix: string; hash: string };
  hash(key: string): string;
}
