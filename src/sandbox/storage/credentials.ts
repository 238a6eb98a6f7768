/**
 * The storage authorization domain: one bucket per client-and-user pair, and short-lived
 * credentials (access key, secret, session token, expiry) valid for that bucket only, with the
 * seed's inline session policy: GetObject, PutObject, DeleteObject, ListBucket.
 */
import { createHash, randomBytes } from 'node:crypto';

export const STORAGE_SCOPE = 'com.vendor.storage';
export const DEFAULT_LIFETIME_SECONDS = 3600;
export const S3_REGION = 'us-east-1';

/** What the session policy allows; the gateway maps each request to one of these. */
export type S3Action = 's3:GetObject' | 's3:PutObject' | 's3:DeleteObject' | 's3:ListBucket';
export const ALLOWED_ACTIONS: ReadonlySet<string> = new Set<S3Action>([
  's3:GetObject',
  's3:PutObject',
  's3:DeleteObject',
  's3:ListBucket',
]);

export interface TemporaryCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
  bucket: string;
  clientId: string;
  sub: string;
}

/** A valid S3 bucket name (3–63 lower-case letters, digits, hyphens) derived from the pair. */
export function bucketNameFor(clientId: string, sub: string): string {
  const digest = createHash('sha256').update(`${clientId}\u0000${sub}`, 'utf8').digest('hex');
  return `esign-${digest.slice(0, 40)}`;
}

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function accessKeyId(): string {
  // `ASIA…`, as AWS marks temporary (STS) access keys.
  return 'ASIA' + [...randomBytes(16)].map((byte) => KEY_ALPHABET[byte % 32]).join('');
}

export class CredentialIssuer {
  private readonly sessions = new Map<string, TemporaryCredentials>();
  lifetimeSeconds = DEFAULT_LIFETIME_SECONDS;

  issue(clientId: string, sub: string, now: Date): TemporaryCredentials {
    this.prune(now);
    const credentials: TemporaryCredentials = {
      accessKeyId: accessKeyId(),
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: randomBytes(96).toString('base64'),
      expiration: new Date(Math.floor(now.getTime() / 1000) * 1000 + this.lifetimeSeconds * 1000),
      bucket: bucketNameFor(clientId, sub),
      clientId,
      sub,
    };
    this.sessions.set(credentials.accessKeyId, credentials);
    return credentials;
  }

  lookup(accessKeyId: string): TemporaryCredentials | undefined {
    return this.sessions.get(accessKeyId);
  }

  /** Forgets credentials that expired more than a day ago (later, their key is simply unknown). */
  private prune(now: Date): void {
    for (const [key, session] of this.sessions)
      if (session.expiration.getTime() + 86_400_000 < now.getTime()) this.sessions.delete(key);
  }
}
