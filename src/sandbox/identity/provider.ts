/**
 * The sandbox identity service (seed 001) as a domain object: registered clients, authorization
 * processes (QR challenge 10 min, then PIN consent 10 min), codes, access tokens, RS256 ID tokens
 * with pairwise subjects, userinfo claims per scope, and introspection for the other sandbox
 * services. No HTTP here; `routes.ts` maps requests onto it. Strict by design: a lenient emulator
 * would prove nothing about the client.
 */
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../core/ports.js';
import type { IdentityTokenInfo } from '../deps.js';
import { CASES, DEFAULT_USER, findUser, type IdentityCase, type TestUser } from './users.js';
import { CLAIMS_BY_SCOPE, KNOWN_SCOPES } from '../../core/oidc/claims.js';
// The loopback redirect rule (RFC 8252 §7.3) is the same for both OAuth services of the sandbox.
import { redirectUriAllowed, type RegisteredClient } from '../signing/service.js';
import { timingSafeEqualText } from '../secrets.js';

export const CHALLENGE_LIFETIME_S = 600;
export const CONSENT_LIFETIME_S = 600;
/** The whole process (challenge plus PIN step) ends after both windows. */
export const PROCESS_LIFETIME_S = CHALLENGE_LIFETIME_S + CONSENT_LIFETIME_S;
export const ACCESS_TOKEN_LIFETIME_S = 3600;
export const ID_TOKEN_LIFETIME_S = 600;
export const CODE_LIFETIME_S = 60;
export const MAX_STATE_BYTES = 255;
/** The redirect URI registered for the CLI; any loopback port is accepted with it (RFC 8252 §7.3). */
export const REGISTERED_REDIRECT_URI = 'http://127.0.0.1:8765/callback';
const SESSION_RETENTION_S = PROCESS_LIFETIME_S + 3600;

export type { RegisteredClient };

export class IdentityError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string | undefined,
  ) {
    super(description ?? error);
  }
}

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  scopes: string[];
  nonce?: string;
  codeChallenge?: string;
  /** Unix seconds of the request (`rat`). */
  requestedAt: number;
}

export type AuthorizeCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'redirect-error'; redirectUri: string; state: string | undefined; error: string; description: string }
  | { kind: 'fatal'; description: string };

/** One login in progress: the QR challenge, then (after the simulated scan) the PIN step. */
export interface Process {
  id: string;
  request: AuthorizationRequest;
  startedAt: number;
  challengeExpiresAt: number;
  user?: TestUser;
  consentExpiresAt?: number;
}

/** How a step ended: go on, or an error case for the redirect. */
export type StepResult = { kind: 'ok' } | { kind: 'case'; errorCase: IdentityCase };

interface CodeRecord {
  request: AuthorizationRequest;
  user: TestUser;
  authTime: number;
  expiresAt: number;
  used: boolean;
  issuedToken?: string;
}

interface AccessTokenRecord {
  user: TestUser;
  clientId: string;
  sub: string;
  scopes: string[];
  authTime: number;
  requestedAt: number;
  expiresAt: number;
}

export interface TokenResponseBody {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  id_token: string;
  scope: string;
}

/** Ways the next ID token (or userinfo answer) is spoiled, for the client's negative tests. */
export const ID_TOKEN_FAULTS = [
  'wrong-iss',
  'wrong-aud',
  'wrong-nonce',
  'expired',
  'alg-none',
  'bad-signature',
  'userinfo-sub',
] as const;
export type IdTokenFault = (typeof ID_TOKEN_FAULTS)[number];

interface SigningKey {
  privateKey: KeyObject;
  publicJwk: Record<string, string>;
  kid: string;
  /** Secret behind the pairwise subjects. */
  pairwiseSecret: Buffer;
}

export class IdentityProvider {
  private readonly processes = new Map<string, Process>();
  private readonly codes = new Map<string, CodeRecord>();
  private readonly accessTokens = new Map<string, AccessTokenRecord>();
  private readonly armedCases: IdentityCase[] = [];
  private readonly armedIdTokenFaults: IdTokenFault[] = [];

  private constructor(
    readonly issuer: string,
    private readonly clock: Clock,
    readonly clients: readonly RegisteredClient[],
    private readonly key: SigningKey,
  ) {}

  /** Loads the signing key and pairwise secret from the data dir, creating them on first start. */
  static async open(options: {
    dataDir: string;
    issuer: string;
    clock: Clock;
    clients: RegisteredClient[];
  }): Promise<IdentityProvider> {
    return new IdentityProvider(options.issuer, options.clock, options.clients, await loadOrCreateKey(options.dataDir));
  }

  private nowS(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  get jwks(): { keys: Record<string, string>[] } {
    return { keys: [{ ...this.key.publicJwk, kid: this.key.kid, use: 'sig', alg: 'RS256' }] };
  }

  // ---- test switches -------------------------------------------------------------------------

  /** The next `times` logins end in this error case (at the step where the case belongs). */
  armCase(errorCase: IdentityCase, times = 1): void {
    for (let index = 0; index < times; index++) this.armedCases.push(errorCase);
  }

  armIdTokenFault(fault: IdTokenFault, times = 1): void {
    for (let index = 0; index < times; index++) this.armedIdTokenFaults.push(fault);
  }

  clearSwitches(): void {
    this.armedCases.length = 0;
    this.armedIdTokenFaults.length = 0;
  }

  private takeArmed(phase: 'scan' | 'consent'): IdentityCase | undefined {
    const index = this.armedCases.findIndex((errorCase) => CASES[errorCase].phase === phase);
    return index < 0 ? undefined : this.armedCases.splice(index, 1)[0];
  }

  private takeIdTokenFault(only?: IdTokenFault): IdTokenFault | undefined {
    const index = this.armedIdTokenFaults.findIndex((fault) => (only ? fault === only : fault !== 'userinfo-sub'));
    return index < 0 ? undefined : this.armedIdTokenFaults.splice(index, 1)[0];
  }

  // ---- authorization -------------------------------------------------------------------------

  /** Validates `GET /oauth2/authorize` (seed §4.1). */
  checkAuthorizeRequest(query: URLSearchParams): AuthorizeCheck {
    const clientId = query.get('client_id') ?? undefined;
    const client = this.clients.find((candidate) => candidate.clientId === clientId);
    if (!clientId || !client)
      return { kind: 'fatal', description: 'The client_id is missing or not registered with this service.' };
    if (query.getAll('client_id').length > 1 || query.getAll('redirect_uri').length > 1)
      return { kind: 'fatal', description: 'The client_id or redirect_uri is repeated.' };
    const given = query.get('redirect_uri') ?? undefined;
    if (given !== undefined && !redirectUriAllowed(client, given))
      return { kind: 'fatal', description: 'The redirect_uri is not registered for this client.' };
    const redirectUri = given ?? client.redirectUris[0] ?? REGISTERED_REDIRECT_URI;
    const state = query.get('state') ?? undefined;
    const fail = (error: string, description: string): AuthorizeCheck => ({
      kind: 'redirect-error',
      redirectUri,
      state,
      error,
      description,
    });
    for (const name of new Set(query.keys()))
      if (query.getAll(name).length > 1) return fail('invalid_request', `The parameter ${name} is repeated.`);
    if (state === undefined || state === '') return fail('invalid_request', 'The state parameter is required.');
    if (Buffer.byteLength(state, 'utf8') > MAX_STATE_BYTES)
      return fail('invalid_request', `The state is longer than ${MAX_STATE_BYTES} bytes.`);
    const responseType = query.get('response_type');
    if (!responseType) return fail('invalid_request', 'The response_type parameter is required.');
    if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
    const scope = query.get('scope');
    if (!scope) return fail('invalid_request', 'The scope parameter is required.');
    const scopes = scope.split(' ').filter(Boolean);
    if (!scopes.includes('openid')) return fail('invalid_scope', 'The scope must contain openid.');
    const unknown = scopes.find((item) => !(KNOWN_SCOPES as readonly string[]).includes(item));
    if (unknown) return fail('invalid_scope', `Unknown scope ${JSON.stringify(unknown)}.`);
    const request: AuthorizationRequest = {
      clientId,
      redirectUri,
      state,
      scopes: [...new Set(scopes)],
      requestedAt: this.nowS(),
    };
    const nonce = query.get('nonce');
    if (nonce !== null) {
      if (nonce === '') return fail('invalid_request', 'The nonce is empty.');
      request.nonce = nonce;
    }
    const challenge = query.get('code_challenge');
    if (challenge !== null) {
      if (query.get('code_challenge_method') !== 'S256')
        return fail('invalid_request', 'Only code_challenge_method=S256 is supported.');
      if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'The code_challenge is malformed.');
      request.codeChallenge = challenge;
    }
    return { kind: 'ok', request };
  }

  /** Starts a process: the QR challenge is valid for 10 minutes. */
  startProcess(request: AuthorizationRequest): Process {
    this.prune();
    const now = this.nowS();
    const process: Process = {
      id: randomToken(),
      request,
      startedAt: now,
      challengeExpiresAt: now + CHALLENGE_LIFETIME_S,
    };
    this.processes.set(process.id, process);
    return process;
  }

  process(id: string): Process | undefined {
    return this.processes.get(id);
  }

  /** The end of a process (code or error): it cannot be used again. */
  finish(process: Process): void {
    this.processes.delete(process.id);
  }

  /** The phone scanned the QR code as `userId`: the PIN step (10 minutes) starts, or a case ends it. */
  scan(process: Process, userId: string): StepResult {
    const user = findUser(userId);
    if (!user) throw new IdentityError(400, 'invalid_request', 'Unknown test user.');
    if (process.user) throw new IdentityError(400, 'invalid_request', 'This QR code was already scanned.');
    if (this.nowS() >= process.challengeExpiresAt) return { kind: 'case', errorCase: 'ChallengeExpired' };
    const armed = this.takeArmed('scan');
    if (armed) return { kind: 'case', errorCase: armed };
    if (user.triggers && CASES[user.triggers].phase === 'scan') return { kind: 'case', errorCase: user.triggers };
    process.user = user;
    process.consentExpiresAt = this.nowS() + CONSENT_LIFETIME_S;
    return { kind: 'ok' };
  }

  /** The user entered a PIN and agreed (or refused): a code, or a case. */
  consent(
    process: Process,
    decision: 'approve' | 'refuse',
  ): { kind: 'code'; code: string } | { kind: 'case'; errorCase: IdentityCase } {
    const user = process.user;
    if (!user || process.consentExpiresAt === undefined)
      throw new IdentityError(400, 'invalid_request', 'The QR code was not scanned yet.');
    const now = this.nowS();
    if (now >= process.startedAt + PROCESS_LIFETIME_S) return { kind: 'case', errorCase: 'ProcessExpired' };
    if (now >= process.consentExpiresAt) return { kind: 'case', errorCase: 'ConsentExpired' };
    if (decision === 'refuse') return { kind: 'case', errorCase: 'ConsentRejected' };
    const armed = this.takeArmed('consent');
    if (armed) return { kind: 'case', errorCase: armed };
    if (user.triggers) return { kind: 'case', errorCase: user.triggers };
    return { kind: 'code', code: this.issueCode(process.request, user, now) };
  }

  /** `--auto-approve`: scan as the default user and consent at once (armed cases still apply). */
  approveAtOnce(
    request: AuthorizationRequest,
  ): { kind: 'code'; code: string } | { kind: 'case'; errorCase: IdentityCase } {
    const process = this.startProcess(request);
    try {
      const scanned = this.scan(process, DEFAULT_USER);
      if (scanned.kind === 'case') return scanned;
      return this.consent(process, 'approve');
    } finally {
      this.finish(process);
    }
  }

  private issueCode(request: AuthorizationRequest, user: TestUser, authTime: number): string {
    const code = randomToken();
    this.codes.set(code, { request, user, authTime, expiresAt: authTime + CODE_LIFETIME_S, used: false });
    return code;
  }

  // ---- token endpoint ------------------------------------------------------------------------

  authenticateClient(clientId: string, clientSecret: string): RegisteredClient | undefined {
    const client = this.clients.find((candidate) => candidate.clientId === clientId);
    return client && timingSafeEqualText(client.clientSecret, clientSecret) ? client : undefined;
  }

  /** Exchanges a code (seed §4.2). An invalid code is `invalid_request`, as the document lists it. */
  exchangeCode(
    client: RegisteredClient,
    form: { code?: string; redirectUri?: string; codeVerifier?: string },
  ): TokenResponseBody {
    if (!form.code) throw new IdentityError(400, 'invalid_request', 'The code parameter is required.');
    if (!form.redirectUri) throw new IdentityError(400, 'invalid_request', 'The redirect_uri parameter is required.');
    const record = this.codes.get(form.code);
    const invalid = () => new IdentityError(400, 'invalid_request', 'Invalid authorization code.');
    if (!record) throw invalid();
    if (record.used) {
      // RFC 6749 §4.1.2: a code used twice revokes the token it gave.
      if (record.issuedToken) this.accessTokens.delete(record.issuedToken);
      throw invalid();
    }
    record.used = true;
    const now = this.nowS();
    if (record.expiresAt <= now || record.request.clientId !== client.clientId) throw invalid();
    if (record.request.redirectUri !== form.redirectUri)
      throw new IdentityError(
        400,
        'invalid_request',
        'The redirect_uri differs from the one of the authorization request.',
      );
    if (record.request.codeChallenge) {
      const expected = form.codeVerifier
        ? createHash('sha256').update(form.codeVerifier, 'ascii').digest('base64url')
        : undefined;
      if (expected !== record.request.codeChallenge)
        throw new IdentityError(400, 'invalid_grant', 'The code_verifier does not match the code_challenge.');
    } else if (form.codeVerifier !== undefined) {
      throw new IdentityError(
        400,
        'invalid_grant',
        'A code_verifier was sent but the authorization request had no code_challenge.',
      );
    }
    const sub = this.pairwiseSub(client.clientId, record.user.id);
    const accessToken = randomToken();
    record.issuedToken = accessToken;
    this.accessTokens.set(accessToken, {
      user: record.user,
      clientId: client.clientId,
      sub,
      scopes: record.request.scopes,
      authTime: record.authTime,
      requestedAt: record.request.requestedAt,
      expiresAt: now + ACCESS_TOKEN_LIFETIME_S,
    });
    return {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: ACCESS_TOKEN_LIFETIME_S,
      id_token: this.idToken(record, sub, now),
      scope: record.request.scopes.join(' '),
    };
  }

  private idToken(record: CodeRecord, sub: string, now: number): string {
    const fault = this.takeIdTokenFault();
    const payload: Record<string, unknown> = {
      iss: fault === 'wrong-iss' ? `${this.issuer}-other` : this.issuer,
      sub,
      aud: fault === 'wrong-aud' ? 'another-client' : record.request.clientId,
      iat: fault === 'expired' ? now - 2 * ID_TOKEN_LIFETIME_S : now,
      exp: fault === 'expired' ? now - ID_TOKEN_LIFETIME_S : now + ID_TOKEN_LIFETIME_S,
      auth_time: record.authTime,
      rat: record.request.requestedAt,
    };
    if (record.request.nonce !== undefined)
      payload['nonce'] = fault === 'wrong-nonce' ? `${record.request.nonce}x` : record.request.nonce;
    if (fault === 'alg-none') return `${b64json({ alg: 'none', typ: 'JWT' })}.${b64json(payload)}.`;
    const signingInput = `${b64json({ alg: 'RS256', typ: 'JWT', kid: this.key.kid })}.${b64json(payload)}`;
    const key =
      fault === 'bad-signature' ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey : this.key.privateKey;
    return `${signingInput}.${sign('sha256', Buffer.from(signingInput), key).toString('base64url')}`;
  }

  /** Pairwise pseudonymous identifier (OIDC Core 8.1): one per user and client. */
  pairwiseSub(clientId: string, userId: string): string {
    return createHmac('sha256', this.key.pairwiseSecret).update(`${clientId}\n${userId}`).digest('base64url');
  }

  // ---- userinfo and introspection ------------------------------------------------------------

  private accessToken(token: string | undefined): AccessTokenRecord {
    const record = token ? this.accessTokens.get(token) : undefined;
    if (!token || !record) throw new IdentityError(401, 'invalid_token', 'A valid Bearer access token is required.');
    if (record.expiresAt <= this.nowS()) {
      this.accessTokens.delete(token);
      throw new IdentityError(401, 'invalid_token', 'The access token has expired.');
    }
    return record;
  }

  /** `GET /userinfo` (seed §4.3): token claims, plus the claims the scopes release and the user can share. */
  userinfo(token: string | undefined): Record<string, unknown> {
    const record = this.accessToken(token);
    if (!record.scopes.includes('openid'))
      throw new IdentityError(403, 'insufficient_scope', 'The access token was not issued with scope openid.');
    const claims: Record<string, unknown> = {
      sub: this.takeIdTokenFault('userinfo-sub')
        ? this.pairwiseSub(record.clientId, `${record.user.id}-other`)
        : record.sub,
      aud: [record.clientId],
      auth_time: record.authTime,
      iat: this.nowS(),
      iss: this.issuer,
      rat: record.requestedAt,
    };
    for (const scope of record.scopes) {
      for (const claim of CLAIMS_BY_SCOPE[scope] ?? []) {
        const value = record.user.claims[claim];
        if (value !== undefined) claims[claim] = value;
      }
    }
    return claims;
  }

  /** What the storage service learns about an access token (never the user's claims). */
  introspect(token: string): IdentityTokenInfo {
    const record = this.accessTokens.get(token);
    if (!record || record.expiresAt <= this.nowS()) return { active: false, scope: [] };
    return {
      active: true,
      sub: record.sub,
      client_id: record.clientId,
      scope: [...record.scopes],
      exp: record.expiresAt,
    };
  }

  private prune(): void {
    const now = this.nowS();
    for (const [id, process] of this.processes)
      if (process.startedAt + SESSION_RETENTION_S < now) this.processes.delete(id);
    for (const [code, record] of this.codes) if (record.expiresAt + 3600 < now) this.codes.delete(code);
  }
}

async function loadOrCreateKey(dataDir: string): Promise<SigningKey> {
  const dir = join(dataDir, 'identity');
  const path = join(dir, 'signing-key.json');
  let stored: { privateJwk: Record<string, string>; pairwiseSecret: string } | undefined;
  try {
    stored = JSON.parse(await readFile(path, 'utf8')) as typeof stored;
  } catch {
    stored = undefined;
  }
  if (!stored) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    stored = {
      privateJwk: privateKey.export({ format: 'jwk' }) as Record<string, string>,
      pairwiseSecret: randomBytes(32).toString('base64url'),
    };
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(path, JSON.stringify(stored, null, 2) + '\n', { mode: 0o600 });
    await chmod(path, 0o600);
  }
  const privateKey = createPrivateKey({ key: stored.privateJwk, format: 'jwk' });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' }) as Record<string, string>;
  const publicJwk = { kty: 'RSA', n: jwk['n'] ?? '', e: jwk['e'] ?? '' };
  // RFC 7638 thumbprint: members in lexicographic order.
  const kid = createHash('sha256')
    .update(JSON.stringify({ e: publicJwk.e, kty: 'RSA', n: publicJwk.n }))
    .digest('base64url');
  return { privateKey, publicJwk, kid, pairwiseSecret: Buffer.from(stored.pairwiseSecret, 'base64url') };
}

function b64json(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function randomToken(): string {
  return randomBytes(32).toString('base64url');
}
