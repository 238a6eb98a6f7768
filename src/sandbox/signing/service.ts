/**
 * The sandbox signing service as a domain object: registered clients, authorization codes,
 * service tokens, SADs and signHash with the test keys. No HTTP here; `routes.ts` maps requests
 * onto it. It enforces every rule of the service document: a lenient emulator would prove nothing.
 */
import { X509Certificate, createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../core/ports.js';
import {
  MAX_HASHES_PER_AUTHORIZATION,
  MAX_STATE_BYTES,
  SAD_LIFETIME_S,
  SERVICE_TOKEN_LIFETIME_S,
  SHA256_LENGTH,
} from '../../core/csc/shapes.js';
import { digestOfLength, digestOfOid, type DigestName, type SignatureScheme } from '../../core/cms/algorithms.js';
import type { SandboxCredential, SandboxPki } from '../pki.js';
import { SEAL_POLICIES, SealAuthority, sealAuthInfo, sealAuthV2, type SealPolicy } from './seals.js';
import { SigningServiceError } from './service-error.js';
import { keyAlgorithms, keyCurve, schemeOfRequest, signWith } from './algorithms.js';
import { timingSafeEqualText } from '../secrets.js';
import { SandboxQuirks } from './quirks.js';

export const CODE_LIFETIME_S = 60;
const APPROVAL_LIFETIME_S = 600;
const DEFAULT_PAGE_SIZE = 20;

export interface RegisteredClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** A client allowed the client_credentials grant signs in as this organization. */
  organization?: string;
}

/** auth/login users: name → password and the account they sign in to. */
export interface LoginUser {
  username: string;
  password: string;
  account: string;
}

export { SigningServiceError };

export type AuthorizationScope = 'service' | 'credential';

/** A validated authorization request. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  scope: AuthorizationScope;
  lang?: string;
  codeChallenge?: string;
  credentialID?: string;
  /** Raw SHA-256 values, for scope credential. */
  hashes?: Uint8Array[];
  /** v2: the RFC 9396 authorization_details as sent, which the token request must repeat. */
  authorizationDetails?: string;
}

/** What validating `GET /oauth2/authorize` gives: a request, an error for the redirect, or a page-only error. */
export type AuthorizeCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'redirect-error'; redirectUri: string; state: string | undefined; error: string; description: string }
  | { kind: 'fatal'; description: string };

interface CodeRecord {
  request: AuthorizationRequest;
  user: string;
  expiresAt: number;
  used: boolean;
  issuedToken?: string;
}

export interface ServiceTokenHolder {
  user: string;
  clientId: string;
  expiresAt: number;
}

interface SadRecord {
  user: string;
  clientId: string;
  credentialID: string;
  /** The hashes it authorizes; undefined for a SCAL 1 authorization given none (any `count` hashes). */
  hashes: string[] | undefined;
  count: number;
  expiresAt: number;
  /** From credentials/authorize: spent by the signHash that uses it. */
  singleUse?: boolean;
}

interface Approval {
  request: AuthorizationRequest;
  user: string;
  expiresAt: number;
}

export interface TokenGrant {
  access_token: string;
  token_type: 'Bearer' | 'SAD';
  expires_in: number;
}

export interface CredentialInfoBody {
  key: { status: 'enabled' | 'disabled'; algo: string[]; len: number; curve?: string };
  cert: {
    status: 'valid' | 'expired' | 'revoked';
    certificates?: string[];
    subjectDN?: string;
    issuerDN?: string;
    serialNumber?: string;
    validFrom?: string;
    validTo?: string;
  };
  authMode: 'oauth2code' | 'explicit' | 'implicit';
}

export interface CredentialInfoOptionsV2 {
  certificates: 'none' | 'single' | 'chain';
  certInfo: boolean;
  authInfo: boolean;
}

export interface CredentialInfoBodyV2 {
  key: { status: 'enabled' | 'disabled'; algo: string[]; len: number; curve?: string };
  cert: {
    status: 'valid' | 'expired' | 'revoked';
    certificates?: string[];
    issuerDN?: string;
    serialNumber?: string;
    subjectDN?: string;
    validFrom?: string;
    validTo?: string;
  };
  auth?: { mode: 'oauth2code' | 'explicit' | 'implicit'; expression?: string; objects?: object[] };
  SCAL: '1' | '2';
  multisign: number;
}

export const SANDBOX_USERS = ['alice', 'bob'] as const;
const REFRESH_TOKEN_LIFETIME_S = 30 * 24 * 3600;

export class SigningService {
  private readonly codes = new Map<string, CodeRecord>();
  private readonly tokens = new Map<string, ServiceTokenHolder>();
  private readonly sads = new Map<string, SadRecord>();
  private readonly approvals = new Map<string, Approval>();
  private readonly pageTokens = new Map<string, { user: string; offset: number }>();
  /** Calls made with each service token (the quirk revokes-tokens counts them). */
  private readonly tokenUses = new Map<string, number>();
  private readonly refreshTokens = new Map<string, { user: string; username: string; expiresAt: number }>();
  /** Fault switch: the next N signatures returned by signHash are corrupted. */
  corruptSignatures = 0;

  constructor(
    private readonly pki: SandboxPki,
    private readonly clock: Clock,
    private readonly clients: RegisteredClient[],
    /** The CSC API spoken: 1 (v1.0.4, the seed) or 2 (v2.0.0.2). */
    readonly version: 1 | 2 = 1,
    readonly seals: SealAuthority = new SealAuthority(),
    private readonly loginUsers: LoginUser[] = [],
    private readonly quirks: SandboxQuirks = new SandboxQuirks(),
  ) {}

  private nowMs(): number {
    return this.clock.now().getTime();
  }

  // ---- authorization -------------------------------------------------------------------------

  /** Validates the query of `GET /oauth2/authorize` (seed §4.1). */
  checkAuthorizeRequest(query: URLSearchParams): AuthorizeCheck {
    const clientId = single(query, 'client_id');
    const client = this.clients.find((candidate) => candidate.clientId === clientId);
    if (!clientId || !client)
      return { kind: 'fatal', description: 'The client_id is missing or not registered with this service.' };
    const redirectUri = single(query, 'redirect_uri');
    if (!redirectUri || !redirectUriAllowed(client, redirectUri)) {
      return { kind: 'fatal', description: 'The redirect_uri is missing or not registered for this client.' };
    }
    const state = single(query, 'state');
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
    const responseType = single(query, 'response_type');
    if (!responseType) return fail('invalid_request', 'The response_type parameter is required.');
    if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
    const details = this.version === 2 ? single(query, 'authorization_details') : undefined;
    // RFC 9396 replaces the scope: a request with both is ambiguous.
    if (details !== undefined && single(query, 'scope') !== undefined)
      return fail('invalid_request', 'The scope parameter is not used with authorization_details');
    const scope = single(query, 'scope') ?? (details !== undefined ? 'credential' : undefined);
    if (!scope) return fail('invalid_request', 'The scope parameter is required.');
    if (scope !== 'service' && scope !== 'credential') {
      const words = scope.split(/\s+/);
      return fail(
        'invalid_scope',
        words.includes('service') && words.includes('credential')
          ? 'The scopes service and credential are used separately, never together.'
          : `Unknown scope ${JSON.stringify(scope)}; use service or credential.`,
      );
    }
    const request: AuthorizationRequest = { clientId, redirectUri, state, scope };
    const lang = single(query, 'lang');
    if (lang) request.lang = lang;
    const challenge = single(query, 'code_challenge');
    if (challenge === undefined && this.version === 2)
      return fail('invalid_request', 'Missing (or invalid type) string parameter code_challenge');
    if (challenge !== undefined) {
      if (single(query, 'code_challenge_method') !== 'S256')
        return fail('invalid_request', 'Only code_challenge_method=S256 is supported.');
      if (!/^[A-Za-z0-9_-]{43,128}$/.test(challenge))
        return fail('invalid_request', 'The code_challenge is malformed.');
      request.codeChallenge = challenge;
    }
    if (scope === 'credential' && this.version === 2) {
      const parsed = details !== undefined ? credentialDetails(details) : credentialHashesV2(query);
      if (typeof parsed === 'string') return fail('invalid_request', parsed);
      if (!this.pki.credentials.some((credential) => credential.credentialID === parsed.credentialID)) {
        return fail(
          'invalid_request',
          `Invalid parameter credentialID: ${JSON.stringify(parsed.credentialID)} is unknown.`,
        );
      }
      if (SEAL_POLICIES[parsed.credentialID])
        return fail('invalid_request', 'Invalid parameter credentialID: it is authorized with credentials/authorize');
      request.credentialID = parsed.credentialID;
      request.hashes = parsed.hashes;
      if (details !== undefined) request.authorizationDetails = details;
    } else if (scope === 'credential') {
      const credentialID = single(query, 'credentialID');
      if (!credentialID)
        return fail('invalid_request', 'The credentialID parameter is required with scope credential.');
      const numText = single(query, 'numSignatures');
      if (numText === undefined)
        return fail('invalid_request', 'The numSignatures parameter is required with scope credential.');
      if (!/^\d+$/.test(numText)) return fail('invalid_request', 'numSignatures must be an integer.');
      const numSignatures = Number(numText);
      if (numSignatures < 1 || numSignatures > MAX_HASHES_PER_AUTHORIZATION) {
        return fail(
          'invalid_request',
          `numSignatures must be between 1 and ${MAX_HASHES_PER_AUTHORIZATION}, got ${numSignatures}.`,
        );
      }
      const hashText = single(query, 'hash');
      if (!hashText) return fail('invalid_request', 'The hash parameter is required with scope credential.');
      const entries = hashText.split(',');
      if (entries.length !== numSignatures) {
        return fail('invalid_request', `numSignatures is ${numSignatures} but ${entries.length} hashes were listed.`);
      }
      const hashes: Uint8Array[] = [];
      for (const entry of entries) {
        const hash = decodeBase64Url(entry);
        if (!hash) return fail('invalid_request', 'Every hash must be base64url-encoded (not standard base64).');
        if (digestOfLength(hash.length) === undefined || hash.length !== (hashes[0] ?? hash).length) {
          return fail(
            'invalid_request',
            `Every hash must be a SHA-256, SHA-384 or SHA-512 value (${SHA256_LENGTH}, 48 or 64 bytes), all of one.`,
          );
        }
        hashes.push(hash);
      }
      if (!this.pki.credentials.some((credential) => credential.credentialID === credentialID)) {
        return fail('invalid_request', `Unknown credentialID ${JSON.stringify(credentialID)}.`);
      }
      if (SEAL_POLICIES[credentialID])
        return fail(
          'invalid_request',
          `The credential ${credentialID} is authorized with credentials/authorize, not in the browser.`,
        );
      request.credentialID = credentialID;
      request.hashes = hashes;
    }
    return { kind: 'ok', request };
  }

  /**
   * The signer signed in as `user`. For scope credential the credential must be theirs and usable.
   * Returns the approval ticket for the consent page.
   */
  signIn(request: AuthorizationRequest, user: string): string {
    if (!(SANDBOX_USERS as readonly string[]).includes(user))
      throw new SigningServiceError(400, 'access_denied', 'Unknown test user.');
    if (request.scope === 'credential') {
      const credential = this.credentialOf(user, request.credentialID ?? '');
      if (!credential)
        throw new SigningServiceError(
          400,
          'invalid_request',
          `The credential ${request.credentialID ?? ''} does not belong to the signed-in user.`,
        );
      const status = this.statusOf(credential);
      if (status.status === 'disabled') {
        throw new SigningServiceError(
          400,
          'invalid_request',
          `The credential ${credential.credentialID} is disabled (${status.reason}).`,
        );
      }
    }
    const ticket = randomToken();
    this.approvals.set(ticket, { request, user, expiresAt: this.nowMs() + APPROVAL_LIFETIME_S * 1000 });
    return ticket;
  }

  /** The approval behind a consent-page ticket; single use. */
  takeApproval(ticket: string): Approval | undefined {
    const approval = this.approvals.get(ticket);
    this.approvals.delete(ticket);
    return approval && approval.expiresAt > this.nowMs() ? approval : undefined;
  }

  peekApproval(ticket: string): Approval | undefined {
    const approval = this.approvals.get(ticket);
    return approval && approval.expiresAt > this.nowMs() ? approval : undefined;
  }

  /** The signer approved: a single-use code, valid 60 s, bound to the whole request and the user. */
  issueCode(request: AuthorizationRequest, user: string): string {
    const code = randomToken();
    this.codes.set(code, { request, user, expiresAt: this.nowMs() + CODE_LIFETIME_S * 1000, used: false });
    return code;
  }

  // ---- token endpoint ------------------------------------------------------------------------

  authenticateClient(clientId: string, clientSecret: string): RegisteredClient | undefined {
    const client = this.clients.find((candidate) => candidate.clientId === clientId);
    return client && timingSafeEqualText(client.clientSecret, clientSecret) ? client : undefined;
  }

  /** Exchanges a code (seed §4.2): `Bearer` 3600 s for scope service, `SAD` 300 s for scope credential. */
  exchangeCode(
    client: RegisteredClient,
    form: { code?: string; redirectUri?: string; codeVerifier?: string; authorizationDetails?: string },
  ): TokenGrant {
    if (!form.code) throw new SigningServiceError(400, 'invalid_request', 'The code parameter is required.');
    if (!form.redirectUri)
      throw new SigningServiceError(400, 'invalid_request', 'The redirect_uri parameter is required.');
    const record = this.codes.get(form.code);
    if (!record) throw new SigningServiceError(400, 'invalid_grant', 'The authorization code is unknown.');
    if (record.used) {
      // RFC 6749 §4.1.2: a code used twice revokes what it gave.
      if (record.issuedToken) {
        this.tokens.delete(record.issuedToken);
        this.sads.delete(record.issuedToken);
      }
      throw new SigningServiceError(400, 'invalid_grant', 'The authorization code was already used.');
    }
    record.used = true;
    if (record.expiresAt <= this.nowMs())
      throw new SigningServiceError(400, 'invalid_grant', 'The authorization code has expired.');
    if (record.request.clientId !== client.clientId)
      throw new SigningServiceError(400, 'invalid_grant', 'The authorization code was issued to another client.');
    if (record.request.redirectUri !== form.redirectUri) {
      throw new SigningServiceError(
        400,
        'invalid_grant',
        'The redirect_uri differs from the one in the authorization request.',
      );
    }
    if (record.request.codeChallenge) {
      const expected = form.codeVerifier
        ? createHash('sha256').update(form.codeVerifier).digest('base64url')
        : undefined;
      if (expected !== record.request.codeChallenge)
        throw new SigningServiceError(400, 'invalid_grant', 'The code_verifier does not match the code_challenge.');
    }
    const approved = record.request.authorizationDetails;
    if (approved !== undefined) {
      if (form.authorizationDetails === undefined)
        throw new SigningServiceError(
          400,
          'invalid_request',
          'Missing (or invalid type) string parameter authorization_details',
        );
      if (canonicalJson(form.authorizationDetails) !== canonicalJson(approved)) {
        throw new SigningServiceError(400, 'invalid_grant', 'The authorization_details differ from the ones approved');
      }
    }
    const token = randomToken();
    record.issuedToken = token;
    if (record.request.scope === 'service') {
      this.tokens.set(token, {
        user: record.user,
        clientId: client.clientId,
        expiresAt: this.nowMs() + SERVICE_TOKEN_LIFETIME_S * 1000,
      });
      return { access_token: token, token_type: 'Bearer', expires_in: SERVICE_TOKEN_LIFETIME_S };
    }
    this.sads.set(token, {
      user: record.user,
      clientId: client.clientId,
      credentialID: record.request.credentialID ?? '',
      hashes: hashSet(record.request.hashes ?? []),
      count: record.request.hashes?.length ?? 0,
      expiresAt: this.nowMs() + this.sadLifetimeS() * 1000,
    });
    // v2 §8.3.3: the access token of scope credential is the SAD, of token type Bearer.
    return { access_token: token, token_type: this.version === 2 ? 'Bearer' : 'SAD', expires_in: this.sadLifetimeS() };
  }

  /** RFC 6749 §4.4: a client allowed client_credentials gets a service token for its organization. */
  clientCredentialsGrant(client: RegisteredClient, scope: string | undefined): TokenGrant {
    if (!client.organization)
      throw new SigningServiceError(
        400,
        'unauthorized_client',
        'The client is not allowed the client_credentials grant.',
      );
    if (scope !== undefined && scope !== 'service')
      throw new SigningServiceError(400, 'invalid_scope', 'Only scope service is granted to client credentials.');
    return this.issueServiceToken(client.organization, client.clientId);
  }

  /**
   * auth/login (§11.2): HTTP Basic user and password, or a refresh token of an earlier login; with
   * rememberMe a refresh token comes back (the one used is spent: rotation).
   */
  login(
    basic: { user: string; password: string } | undefined,
    body: { refreshToken?: string; rememberMe: boolean },
  ): TokenGrant & { refresh_token?: string } {
    let account: string;
    let username: string;
    if (body.refreshToken !== undefined) {
      const kept = this.refreshTokens.get(body.refreshToken);
      this.refreshTokens.delete(body.refreshToken);
      if (!kept || kept.expiresAt <= this.nowMs())
        throw new SigningServiceError(400, 'invalid_request', 'Invalid refresh_token');
      ({ user: account, username } = kept);
    } else {
      if (!basic) throw new SigningServiceError(401, 'invalid_request', 'Malformed authentication parameter.');
      const user = this.loginUsers.find((candidate) => candidate.username === basic.user);
      if (!user || !timingSafeEqualText(user.password, basic.password))
        throw new SigningServiceError(400, 'authentication_error', 'An error occurred during authentication process');
      account = user.account;
      username = user.username;
    }
    const grant = this.issueServiceToken(account, `login:${username}`);
    if (!body.rememberMe) return grant;
    const refreshToken = randomToken();
    this.refreshTokens.set(refreshToken, {
      user: account,
      username,
      expiresAt: this.nowMs() + REFRESH_TOKEN_LIFETIME_S * 1000,
    });
    return { ...grant, refresh_token: refreshToken };
  }

  private issueServiceToken(user: string, clientId: string): TokenGrant {
    const token = randomToken();
    this.tokens.set(token, { user, clientId, expiresAt: this.nowMs() + SERVICE_TOKEN_LIFETIME_S * 1000 });
    return { access_token: token, token_type: 'Bearer', expires_in: SERVICE_TOKEN_LIFETIME_S };
  }

  // ---- credentials/authorize, sendOTP (explicit and implicit credentials) ----------------------

  /**
   * §11.6: checks the credential's PIN and OTP and returns a SAD for numSignatures signatures,
   * bound to the hashes (required for SCAL 2), single-use, expiring. oauth2code credentials refuse it.
   */
  authorizeCredential(
    holder: ServiceTokenHolder,
    request: { credentialID: string; numSignatures: number; hashes?: Uint8Array[]; pin?: string; otp?: string },
  ): { SAD: string; expiresIn: number } {
    const invalid = (description: string) => new SigningServiceError(400, 'invalid_request', description);
    const credential = this.credentialOf(holder.user, request.credentialID);
    if (!credential) throw invalid('Invalid parameter credentialID');
    const policy = SEAL_POLICIES[credential.credentialID];
    if (!policy)
      throw invalid(
        'Invalid parameter credentialID: it is authorized with OAuth 2.0 (oauth2code), not credentials/authorize',
      );
    if (this.statusOf(credential).status === 'disabled')
      throw invalid('The credential identified by credentialID is disabled');
    if (request.numSignatures < 1) throw invalid('Invalid value for parameter numSignatures');
    if (request.numSignatures > policy.multisign) throw invalid('Numbers of signatures is too high');
    if (policy.scal === '2' && request.hashes === undefined)
      throw invalid(
        this.version === 2
          ? 'Missing (or invalid type) array parameter hashes'
          : 'Missing or invalid array parameter hash.',
      );
    if (request.hashes !== undefined && request.hashes.length !== request.numSignatures)
      throw invalid('Invalid value for parameter numSignatures');
    this.seals.check(credential.credentialID, policy, request, this.nowMs());
    const sad = randomToken();
    this.sads.set(sad, {
      user: holder.user,
      clientId: holder.clientId,
      credentialID: credential.credentialID,
      hashes: request.hashes === undefined ? undefined : hashSet(request.hashes),
      count: request.numSignatures,
      expiresAt: this.nowMs() + this.sadLifetimeS() * 1000,
      singleUse: true,
    });
    return { SAD: sad, expiresIn: this.sadLifetimeS() };
  }

  /**
   * v1.0.4 §11.7 credentials/extendTransaction: a new SAD for a current one of the same caller and
   * credential, bound to the hashes given (required for SCAL 2); the old SAD is spent. An expired
   * SAD cannot be extended.
   */
  extendTransaction(
    holder: ServiceTokenHolder,
    request: { credentialID: string; sad: string; hashes?: Uint8Array[] },
  ): { SAD: string; expiresIn: number } {
    const invalid = (description: string) => new SigningServiceError(400, 'invalid_request', description);
    const credential = this.credentialOf(holder.user, request.credentialID);
    if (!credential) throw invalid('Invalid parameter credentialID');
    const sad = this.sads.get(request.sad);
    if (
      !sad ||
      sad.user !== holder.user ||
      sad.clientId !== holder.clientId ||
      sad.credentialID !== request.credentialID
    )
      throw new SigningServiceError(400, 'invalid_sad', 'The SAD is not valid.');
    if (sad.expiresAt <= this.nowMs())
      throw new SigningServiceError(400, 'expired_sad', 'The SAD has expired and cannot be extended.');
    const policy = SEAL_POLICIES[credential.credentialID];
    if ((policy?.scal ?? '2') === '2' && request.hashes === undefined)
      throw invalid('Missing or invalid array parameter hash.');
    if (request.hashes !== undefined && request.hashes.length > sad.count)
      throw invalid('Invalid parameter hash: more hashes than the SAD authorizes.');
    this.sads.delete(request.sad);
    const extended = randomToken();
    this.sads.set(extended, {
      ...sad,
      hashes: request.hashes === undefined ? sad.hashes : hashSet(request.hashes),
      expiresAt: this.nowMs() + this.sadLifetimeS() * 1000,
    });
    return { SAD: extended, expiresIn: this.sadLifetimeS() };
  }

  /** How long a SAD lives: the specification sample's 300 s, or what a quirk says. */
  private sadLifetimeS(): number {
    return this.quirks.sadLifetimeS ?? SAD_LIFETIME_S;
  }

  sendOtp(holder: ServiceTokenHolder, credentialID: string): void {
    const credential = this.credentialOf(holder.user, credentialID);
    const policy = credential ? SEAL_POLICIES[credential.credentialID] : undefined;
    if (!credential || !policy) throw new SigningServiceError(400, 'invalid_request', 'Invalid parameter credentialID');
    this.seals.sendOtp(credentialID, policy, this.nowMs());
  }

  // ---- /csc/v1 -------------------------------------------------------------------------------

  /** The service token's holder, or a 401 `invalid_token`. */
  authenticate(accessToken: string | undefined): ServiceTokenHolder {
    const caller = this.quirks.caller;
    if (caller && accessToken !== undefined)
      throw new SigningServiceError(
        401,
        'invalid_token',
        'This service is authorized externally: no access token is expected.',
      );
    if (caller) return { ...caller, expiresAt: Number.MAX_SAFE_INTEGER };
    const token = accessToken ? this.tokens.get(accessToken) : undefined;
    if (!accessToken || !token)
      throw new SigningServiceError(401, 'invalid_token', 'A valid Bearer access token of scope service is required.');
    if (token.expiresAt <= this.nowMs()) {
      this.tokens.delete(accessToken);
      throw new SigningServiceError(401, 'invalid_token', 'The access token has expired.');
    }
    const uses = (this.tokenUses.get(accessToken) ?? 0) + 1;
    this.tokenUses.set(accessToken, uses);
    if (this.quirks.tokenUses !== undefined && uses > this.quirks.tokenUses) {
      this.tokens.delete(accessToken);
      throw new SigningServiceError(401, 'invalid_token', 'The access token was revoked.');
    }
    return token;
  }

  listCredentials(
    user: string,
    options: { maxResults?: number; pageToken?: string },
  ): { credentialIDs: string[]; nextPageToken?: string } {
    const owned = this.pki.credentials
      .filter((credential) => credential.owner === user)
      .map((credential) => credential.credentialID);
    let offset = 0;
    if (options.pageToken !== undefined) {
      const page = this.pageTokens.get(options.pageToken);
      if (!page || page.user !== user)
        throw new SigningServiceError(400, 'invalid_request', 'Invalid parameter pageToken.');
      offset = page.offset;
    }
    const size = options.maxResults ?? DEFAULT_PAGE_SIZE;
    const credentialIDs = owned.slice(offset, offset + size);
    if (offset + size >= owned.length) return { credentialIDs };
    const nextPageToken = randomToken();
    this.pageTokens.set(nextPageToken, { user, offset: offset + size });
    return { credentialIDs, nextPageToken };
  }

  /**
   * v1.0.4 `credentials/info` (§11.5), to the letter: `certificates` none, single or chain (single
   * when absent), the DNs, serial and dates only with `certInfo`, the PIN and OTP groups only with
   * `authInfo`.
   */
  credentialInfo(user: string, credentialID: string, options: CredentialInfoOptionsV2): CredentialInfoBody {
    if (options.certInfo && this.quirks.refusesCertInfo)
      throw new SigningServiceError(501, 'not_implemented', 'certInfo is not implemented.');
    const credential = this.requireCredential(user, credentialID);
    const status = this.statusOf(credential);
    const { certificates, ...certInfo } = this.describeCertificate(credential, options);
    const { PIN, OTP, ...authorization } = v1Authorization(SEAL_POLICIES[credential.credentialID]) as ReturnType<
      typeof v1Authorization
    > & { PIN?: object; OTP?: object };
    return {
      key: {
        status: status.status,
        algo: keyAlgorithms(credential, 1),
        len: credential.keyBits,
        ...keyCurve(credential),
      },
      cert: { status: status.certStatus, ...(certificates.length > 0 ? { certificates } : {}), ...certInfo },
      ...authorization,
      ...(options.authInfo ? { ...(PIN ? { PIN } : {}), ...(OTP ? { OTP } : {}) } : {}),
    };
  }

  /** The certificates asked for, and with `certInfo` the signer's DNs (RFC 4514), serial (hex) and dates (GeneralizedTime). */
  private describeCertificate(
    credential: SandboxCredential,
    options: CredentialInfoOptionsV2,
  ): {
    certificates: string[];
    issuerDN?: string;
    serialNumber?: string;
    subjectDN?: string;
    validFrom?: string;
    validTo?: string;
  } {
    const encoded = this.chainOf(credential).map((der) => Buffer.from(der).toString('base64'));
    const certificates =
      options.certificates === 'none' ? [] : options.certificates === 'chain' ? encoded : encoded.slice(0, 1);
    if (!options.certInfo) return { certificates };
    const certificate = new X509Certificate(credential.signer.certificate);
    return {
      certificates,
      issuerDN: rfc4514(certificate.issuer),
      serialNumber: credential.signer.serialNumberHex,
      subjectDN: rfc4514(certificate.subject),
      validFrom: generalizedTime(new Date(certificate.validFrom)),
      validTo: generalizedTime(new Date(certificate.validTo)),
    };
  }

  /** The chain `certificates: chain` returns (signer, issuing CA, root), as the quirks switched on shorten it. */
  private chainOf(credential: SandboxCredential): Uint8Array[] {
    return this.quirks.chain(credential.chain);
  }

  /**
   * v2 `credentials/info` (§11.5), and each `credentialInfos` entry of `credentials/list` (§11.4):
   * `certificates` none, single or chain (single by default), `cert` DNs and dates only with
   * `certInfo`, `auth` only with `authInfo`; `multisign` is the batch one SAD may authorize.
   */
  credentialInfoV2(user: string, credentialID: string, options: CredentialInfoOptionsV2): CredentialInfoBodyV2 {
    const credential = this.credentialOf(user, credentialID);
    if (!credential) throw new SigningServiceError(400, 'invalid_request', 'Invalid parameter credentialID');
    return this.describeV2(credential, options);
  }

  listCredentialsV2(
    user: string,
    options: CredentialInfoOptionsV2 & { credentialInfo: boolean; onlyValid: boolean },
  ): {
    credentialIDs: string[];
    credentialInfos?: Array<{ credentialID: string } & CredentialInfoBodyV2>;
    onlyValid?: boolean;
  } {
    const owned = this.pki.credentials.filter(
      (credential) =>
        credential.owner === user && (!options.onlyValid || this.statusOf(credential).status === 'enabled'),
    );
    const credentialIDs = owned.map((credential) => credential.credentialID);
    const listed = options.credentialInfo
      ? {
          credentialInfos: owned.map((credential) => ({
            credentialID: credential.credentialID,
            ...this.describeV2(credential, options),
          })),
        }
      : {};
    return { credentialIDs, ...listed, ...(options.onlyValid ? { onlyValid: true } : {}) };
  }

  private describeV2(credential: SandboxCredential, options: CredentialInfoOptionsV2): CredentialInfoBodyV2 {
    const status = this.statusOf(credential);
    const policy = SEAL_POLICIES[credential.credentialID];
    const { certificates, ...certInfo } = this.describeCertificate(credential, options);
    const cert: CredentialInfoBodyV2['cert'] = {
      status: status.certStatus,
      ...(certificates.length > 0 ? { certificates } : {}),
      ...certInfo,
    };
    return {
      key: {
        status: status.status,
        algo: keyAlgorithms(credential, 2),
        len: credential.keyBits,
        ...keyCurve(credential),
      },
      cert,
      ...(options.authInfo ? { auth: policy ? sealAuthV2(policy) : { mode: 'oauth2code' as const } } : {}),
      SCAL: policy?.scal ?? '2',
      multisign: policy?.multisign ?? MAX_HASHES_PER_AUTHORIZATION,
    };
  }

  /**
   * Signs exactly the hashes the SAD was issued for, with the credential's key: signAlgo one of its
   * key/algo, hashAlgo naming the hashes' digest (optional where signAlgo names it), signAlgoParams for RSASSA-PSS.
   */
  signHash(
    token: ServiceTokenHolder,
    request: {
      credentialID: string;
      sad: string;
      hashes: Uint8Array[];
      hashAlgo?: string;
      signAlgo: string;
      signAlgoParams?: string;
    },
  ): string[] {
    const credential = this.requireCredential(token.user, request.credentialID);
    const scheme = schemeOfRequest(
      credential,
      1,
      {
        signAlgo: request.signAlgo,
        ...(request.hashAlgo === undefined ? {} : { hashAlgorithm: request.hashAlgo }),
        ...(request.signAlgoParams === undefined ? {} : { signAlgoParams: request.signAlgoParams }),
      },
      request.hashes,
    );
    if (typeof scheme === 'string') throw new SigningServiceError(400, 'invalid_request', scheme);
    const status = this.statusOf(credential);
    if (status.status === 'disabled')
      throw new SigningServiceError(400, 'credential_disabled', `The credential is disabled (${status.reason}).`);
    const sad = this.sads.get(request.sad);
    if (!sad || sad.user !== token.user || sad.clientId !== token.clientId)
      throw new SigningServiceError(400, 'invalid_sad', 'The SAD is not valid.');
    if (sad.expiresAt <= this.nowMs()) throw new SigningServiceError(400, 'expired_sad', 'The SAD has expired.');
    if (sad.credentialID !== request.credentialID)
      throw new SigningServiceError(400, 'invalid_sad', 'The SAD was issued for another credential.');
    if (!authorizesExactly(sad, request.hashes)) {
      throw new SigningServiceError(400, 'invalid_sad', 'The SAD was issued for other hashes.');
    }
    if (sad.singleUse) this.sads.delete(request.sad);
    return this.sign(credential, request.hashes, scheme);
  }

  /**
   * v2 `signatures/signHash` (§11.10): the SAD in the body beside the service token, or the
   * credential-scoped token (the SAD) as the Bearer token. `signAlgo` must be one of the
   * credential's key/algo; with sha256WithRSAEncryption `hashAlgorithmOID` is ignored. A SAD signs
   * once: the hashes it authorizes, then it is spent. Refusals are 400 `invalid_request` with the
   * specification's descriptions; a missing or unknown token is 401 `invalid_token`.
   */
  signHashV2(
    bearer: string | undefined,
    request: {
      credentialID: string;
      sad?: string;
      hashes: Uint8Array[];
      hashAlgorithmOID?: string;
      signAlgo: string;
      signAlgoParams?: string;
    },
  ): string[] {
    const invalid = (description: string) => new SigningServiceError(400, 'invalid_request', description);
    const bearerSad = bearer ? this.sads.get(bearer) : undefined;
    let holder: { user: string; clientId: string };
    let sadValue: string;
    if (request.sad !== undefined) {
      holder = this.authenticate(bearer);
      sadValue = request.sad;
    } else if (bearer && bearerSad) {
      holder = bearerSad;
      sadValue = bearer;
    } else {
      this.authenticate(bearer); // no token at all is 401; a service token without a SAD is this:
      throw invalid('Missing (or invalid type) string parameter SAD');
    }
    const credential = this.credentialOf(holder.user, request.credentialID);
    if (!credential) throw invalid('Invalid parameter credentialID');
    const scheme = schemeOfRequest(
      credential,
      2,
      {
        signAlgo: request.signAlgo,
        ...(request.hashAlgorithmOID === undefined ? {} : { hashAlgorithm: request.hashAlgorithmOID }),
        ...(request.signAlgoParams === undefined ? {} : { signAlgoParams: request.signAlgoParams }),
      },
      request.hashes,
    );
    if (typeof scheme === 'string') throw invalid(scheme);
    const status = this.statusOf(credential);
    if (status.status === 'disabled') {
      throw invalid(
        status.certStatus === 'expired'
          ? 'Signing certificate is expired'
          : status.certStatus === 'revoked'
            ? 'Signing certificate is revoked'
            : 'Credential is disabled',
      );
    }
    const sad = this.sads.get(sadValue);
    if (
      !sad ||
      sad.user !== holder.user ||
      sad.clientId !== holder.clientId ||
      sad.credentialID !== request.credentialID
    )
      throw invalid('Invalid parameter SAD');
    if (sad.expiresAt <= this.nowMs()) throw invalid('SAD expired');
    if (!authorizesExactly(sad, request.hashes)) throw invalid('Hash is not authorized by the SAD');
    this.sads.delete(sadValue);
    return this.sign(credential, request.hashes, scheme);
  }

  /** Signatures of the hashes with the credential's key, in the scheme asked for (corrupted while the fault is on). */
  private sign(credential: SandboxCredential, hashes: Uint8Array[], scheme: SignatureScheme): string[] {
    return hashes.map((hash) => {
      const signature = signWith(credential, scheme, hash, this.version);
      if (this.corruptSignatures > 0) {
        this.corruptSignatures -= 1;
        signature[signature.length - 1] = (signature[signature.length - 1] ?? 0) ^ 0xff;
      }
      return Buffer.from(signature).toString('base64');
    });
  }

  /** The status `credentials/info` reports; the certificate's dates are judged with the service clock. */
  statusOf(credential: SandboxCredential): {
    status: 'enabled' | 'disabled';
    reason?: string;
    certStatus: 'valid' | 'expired' | 'revoked';
  } {
    if (this.pki.revokedSerials.includes(credential.signer.serialNumberHex))
      return { status: 'disabled', reason: 'certificate revoked', certStatus: 'revoked' };
    if (credential.signer.notAfter.getTime() <= this.nowMs() && !this.quirks.keepsExpiredEnabled)
      return { status: 'disabled', reason: 'certificate expired', certStatus: 'expired' };
    if (
      credential.status === 'disabled' &&
      !(credential.statusReason === 'certificate expired' && this.quirks.keepsExpiredEnabled)
    ) {
      return { status: 'disabled', reason: credential.statusReason ?? 'disabled by owner', certStatus: 'valid' };
    }
    return { status: 'enabled', certStatus: 'valid' };
  }

  credentialOf(user: string, credentialID: string): SandboxCredential | undefined {
    return this.pki.credentials.find(
      (credential) => credential.credentialID === credentialID && credential.owner === user,
    );
  }

  private requireCredential(user: string, credentialID: string): SandboxCredential {
    const credential = this.credentialOf(user, credentialID);
    if (!credential)
      throw new SigningServiceError(400, 'unknown_credential', `Unknown credentialID ${JSON.stringify(credentialID)}.`);
    return credential;
  }
}

function single(query: URLSearchParams, name: string): string | undefined {
  return query.get(name) ?? undefined;
}

/** RFC 8252 §7.3: a loopback redirect URI matches a registered one with any port. */
export function redirectUriAllowed(client: RegisteredClient, candidate: string): boolean {
  if (client.redirectUris.includes(candidate)) return true;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return false;
  }
  if (
    url.protocol !== 'http:' ||
    !['127.0.0.1', '[::1]'].includes(url.hostname) ||
    url.hash ||
    url.username ||
    url.password
  )
    return false;
  return client.redirectUris.some((registered) => {
    const known = new URL(registered);
    return (
      known.protocol === 'http:' &&
      ['127.0.0.1', '[::1]'].includes(known.hostname) &&
      known.pathname === url.pathname &&
      known.search === url.search
    );
  });
}

function decodeBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(text)) return undefined;
  return new Uint8Array(Buffer.from(text, 'base64url'));
}

function hashSet(hashes: Uint8Array[]): string[] {
  return hashes.map((hash) => Buffer.from(hash).toString('hex')).sort();
}

/** Whether `hashes` are exactly the hashes the SAD was issued for, in any order (or, SCAL 1 without hashes, no more than it counts). */
function authorizesExactly(sad: SadRecord, hashes: Uint8Array[]): boolean {
  if (sad.hashes === undefined) return hashes.length <= sad.count;
  const authorized = sad.hashes;
  const wanted = hashSet(hashes);
  return wanted.length === authorized.length && wanted.every((hash, index) => hash === authorized[index]);
}

/** v1.0.4 §11.5: authMode, and for the seals PIN, OTP, SCAL and multisign. */
function v1Authorization(policy: SealPolicy | undefined) {
  if (!policy) return { authMode: 'oauth2code' as const };
  return {
    authMode: policy.authMode,
    ...(policy.authMode === 'explicit' ? sealAuthInfo(policy) : {}),
    SCAL: policy.scal,
    multisign: policy.multisign,
  };
}

function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** v2 scope credential with `credentialID`, `numSignatures`, `hashes` (base64url, comma-separated) and `hashAlgorithmOID`. */
function credentialHashesV2(query: URLSearchParams): { credentialID: string; hashes: Uint8Array[] } | string {
  const credentialID = single(query, 'credentialID');
  if (!credentialID) return 'Missing (or invalid type) string parameter credentialID';
  const numText = single(query, 'numSignatures');
  if (numText === undefined || !/^\d+$/.test(numText))
    return 'Missing (or invalid type) integer parameter numSignatures';
  const numSignatures = Number(numText);
  if (numSignatures < 1 || numSignatures > MAX_HASHES_PER_AUTHORIZATION)
    return `Invalid parameter numSignatures: between 1 and ${MAX_HASHES_PER_AUTHORIZATION}`;
  const hashText = single(query, 'hashes');
  if (!hashText) return 'Missing (or invalid type) string parameter hashes';
  const algorithm = single(query, 'hashAlgorithmOID');
  if (!algorithm) return 'Missing (or invalid type) string parameter hashAlgorithmOID';
  const digest = digestOfOid(algorithm);
  if (!digest) return 'Invalid parameter hashAlgorithmOID';
  const hashes = decodeHashes(hashText.split(','), decodeBase64Url, digest);
  if (typeof hashes === 'string') return hashes;
  if (hashes.length !== numSignatures)
    return `Invalid parameter numSignatures: ${numSignatures}, but ${hashes.length} hashes`;
  return { credentialID, hashes };
}

/** RFC 9396 `authorization_details`: one entry of type credential with `documentDigests` (standard base64). */
function credentialDetails(text: string): { credentialID: string; hashes: Uint8Array[] } | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'Invalid parameter authorization_details: not JSON';
  }
  const entries = Array.isArray(parsed) ? parsed : [];
  const entry = entries.find(
    (item): item is Record<string, unknown> =>
      typeof item === 'object' && item !== null && (item as Record<string, unknown>)['type'] === 'credential',
  );
  if (!entry || entries.length !== 1)
    return 'Invalid parameter authorization_details: one entry of type credential is expected';
  const credentialID = entry['credentialID'];
  if (typeof credentialID !== 'string' || credentialID === '')
    return 'Missing (or invalid type) string parameter credentialID';
  const digest = typeof entry['hashAlgorithmOID'] === 'string' ? digestOfOid(entry['hashAlgorithmOID']) : undefined;
  if (!digest) return 'Invalid parameter hashAlgorithmOID';
  const digests = entry['documentDigests'];
  if (!Array.isArray(digests) || digests.length === 0 || digests.length > MAX_HASHES_PER_AUTHORIZATION) {
    return `Invalid parameter documentDigests: 1 to ${MAX_HASHES_PER_AUTHORIZATION} entries are expected`;
  }
  const texts = digests.map((digest) =>
    typeof digest === 'object' && digest !== null ? (digest as Record<string, unknown>)['hash'] : undefined,
  );
  if (!texts.every((hash): hash is string => typeof hash === 'string'))
    return 'Invalid parameter documentDigests: every entry needs a hash';
  const hashes = decodeHashes(texts, decodeStandardBase64, digest);
  return typeof hashes === 'string' ? hashes : { credentialID, hashes };
}

function decodeHashes(
  texts: string[],
  decode: (text: string) => Uint8Array | undefined,
  digest: DigestName,
): Uint8Array[] | string {
  const hashes: Uint8Array[] = [];
  for (const text of texts) {
    const hash = decode(text);
    if (!hash) return 'Invalid parameter hashes: not encoded as the specification says';
    if (digestOfLength(hash.length) !== digest) return 'Invalid digest value length';
    hashes.push(hash);
  }
  return hashes;
}

/** Standard base64 (not base64url), padded; undefined for anything else. */
export function decodeStandardBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/** ASN.1 GeneralizedTime as CSC v2 writes certificate dates: YYYYMMDDHHMMSSZ. */
function generalizedTime(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d{3}/, '');
}

/** A distinguished name as RFC 4514 writes it: most specific first (CN), comma-separated. */
function rfc4514(nodeName: string): string {
  return nodeName
    .split('\n')
    .reverse()
    .map((part) => part.replace(/([,+"\\<>;])/g, '\\$1'))
    .join(',');
}

/** JSON text compared by value (key order and spacing aside); text that is not JSON stays itself. */
function canonicalJson(text: string): string {
  const sort = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sort)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, v]) => [k, sort(v)]),
          )
        : value;
  try {
    return JSON.stringify(sort(JSON.parse(text)));
  } catch {
    return text;
  }
}
