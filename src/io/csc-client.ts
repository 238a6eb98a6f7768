/**
 * The remote signing service over HTTP: the RemoteSigner port plus credential listing. Requests
 * come from `core/csc/requests.ts`, answers go through `core/csc/responses.ts`; this adapter adds
 * the browser steps, the cached service token and the check of every returned signature.
 * Tokens and SADs are never logged or printed.
 */
import { randomBytes } from 'node:crypto';
import { EsignError, isEsignError } from '../core/errors.js';
import type { Clock, RemoteSigner, SigningCredential } from '../core/ports.js';
import {
  buildAuthorizeUrl,
  buildCredentialsAuthorizeRequest,
  buildCredentialsInfoRequest,
  buildCredentialsListRequest,
  buildExtendTransactionRequest,
  buildSendOtpRequest,
  buildSignHashRequest,
  buildTokenRequest,
  type AuthorizeParams,
} from '../core/csc/requests.js';
import {
  processAuthorizeResponse,
  processCredentialsInfoResponse,
  processCredentialsListResponse,
  processExtendTransactionResponse,
  processSendOtpResponse,
  refusedAfterFreshSignIn,
  processSignHashResponse,
  processTokenResponse,
} from '../core/csc/responses.js';
import {
  MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION,
  SERVICE_TOKEN_LIFETIME_S,
  type CredentialAuthorization,
  type CredentialInfo,
  type PreparedRequest,
} from '../core/csc/shapes.js';
import {
  buildAuthorizeUrlV2,
  buildCredentialsAuthorizeRequestV2,
  buildCredentialsInfoRequestV2,
  buildCredentialsListRequestV2,
  buildInfoRequest,
  buildSignHashRequestV2,
  checkService,
  credentialAuthorizationDetails,
  processCredentialsInfoResponseV2,
  processCredentialsListResponseV2,
  processInfoResponse,
  type ServiceInfo,
} from '../core/csc/v2.js';
import type { CscVersionSetting, ServiceAuthSetting } from '../core/profile.js';
import { OAuthEndpoints, readIssuerMetadata, type OAuthSettings } from './csc-oauth-endpoints.js';
import { codeChallengeS256, verifierFromBytes } from '../core/oidc/pkce.js';
import { assertCertificateCurrent, signingTerms } from '../core/csc/signature.js';
import { acceptedSignatureValue, schemeLabel, type DigestName } from '../core/cms/algorithms.js';
import type { HttpClient, HttpResponse } from './http.js';
import { isFresh, type StoredToken, type TokenStore } from './token-store.js';
import { signInStrategy, type SignInStrategy } from './csc-sign-in.js';
import { sadOfApproval, signWithCurrentSad } from './csc-sad-renewal.js';

/** One browser step, as `Context.authorize` runs it through the loopback receiver. */
export type BrowserAuthorize = (request: {
  buildAuthorizeUrl(redirectUri: string, state: string): string;
  purpose: string;
}) => Promise<{ code: string; redirectUri: string }>;

export interface CscClientOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  clientSecretInBody?: boolean;
  lang?: string;
  http: HttpClient;
  tokens: TokenStore;
  /** Where the service token is cached in the token store. */
  tokenKey: string;
  clock: Clock;
  authorize: BrowserAuthorize;
  /** Page size for credentials/list; the service's default when absent. */
  pageSize?: number;
  /** Which CSC API to speak: `auto` asks the service's `info` (v2 first). */
  version?: CscVersionSetting;
  /** v2: ask for approvals with RFC 9396 authorization_details. */
  authorizationDetails?: boolean;
  /** v2: the SAD as the Bearer token of signHash. */
  sadAsBearer?: boolean;
  /** Most hashes per approval (numSignatures), when the service allows fewer than 50. */
  maxSignatures?: number;
  /** How the service token is obtained; `browser` when absent. */
  serviceAuth?: ServiceAuthSetting;
  /** `basic`: the user of auth/login. */
  login?: { username: string; password: string };
  /** Where the refresh token of auth/login is kept in the token store. */
  refreshTokenKey?: string;
  /** The PIN and OTP of explicit credentials. */
  factors?: AuthorizationFactors;
  /** Says what the run is waiting for (a fresh TOTP step, an OTP sent). */
  progress?: (line: string) => void;
  /** The provider's OAuth server, token request and authorization URL, when not the specification's. */
  oauth?: OAuthSettings;
  /** clientData of credentials/list (some providers filter the list by it). */
  clientData?: string;
  /** A header that carries an API key on every call to the service. */
  apiKey?: { header: string; value: string };
}

/**
 * The PIN and OTP of explicit credentials, as this run can have them (environment, files, a
 * terminal, a TOTP secret). The client asks for them per authorization; `ready` finds, before
 * any document is prepared, that every factor a credential needs can be had here.
 */
export interface AuthorizationFactors {
  ready(credential: SigningCredential): Promise<void>;
  /** The PIN (asked for once per run); undefined when the credential asks for none. */
  pin(credential: SigningCredential): Promise<string | undefined>;
  /**
   * The OTP for one authorization; undefined when none is asked for. `again`: a computed code was
   * refused (used already), so the next time step's code is wanted.
   */
  otp(credential: SigningCredential, again: boolean): Promise<string | undefined>;
  /** Whether the OTP is computed here (a TOTP secret), so that a refused one may be tried again once. */
  computesOtp(credential: SigningCredential): boolean;
}

/** The CSC API a service speaks, and how esign knows. */
export interface SpokenProtocol {
  version: '1' | '2';
  /** `specs` from the service's info, when it has one. */
  specs?: string;
  chosenBy: 'setting' | 'info';
}

const SERVICE = 'signing service';

type AuthorizationScope = { scope: 'service' } | { scope: 'credential'; credentialID: string; hashes: Uint8Array[] };

function newPkce(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = verifierFromBytes(randomBytes(32));
  return { codeVerifier, codeChallenge: codeChallengeS256(codeVerifier) };
}
const MAX_PAGES = 1000;

export class CscClient implements RemoteSigner {
  private spoken: Promise<SpokenProtocol> | undefined;
  /** Whether the protocol, already found out, is v2 (false before `protocol()` settled). */
  private knownV2 = false;
  /** v2 sends every credential's info with the list: kept for the info calls that follow. */
  private readonly listedInfos = new Map<string, CredentialInfo>();
  /** The OAuth server: the settings', else the one the service's info names, else the service's own. */
  private readonly oauth: OAuthEndpoints;
  /** The v1.0.4 paths: `/csc/v1/`, or `/csc/v0/` (cscVersion 0). */
  private readonly pathVersion: 0 | 1;
  /** The methods the service's info lists. */
  private methods: string[] = [];
  /** The service token of this run, as read from the token store or obtained (see cachedServiceToken). */
  private heldToken: StoredToken | undefined;

  private readonly signIn: SignInStrategy;

  constructor(private readonly options: CscClientOptions) {
    const { clientId, clientSecret, clock } = options;
    this.oauth = new OAuthEndpoints(options.baseUrl, options.oauth ?? {}, {
      clientId,
      clientSecret,
      clientSecretInBody: options.clientSecretInBody ?? false,
      clock,
    });
    this.pathVersion = options.version === '0' ? 0 : 1;
    this.signIn = signInStrategy(options.serviceAuth ?? 'browser', {
      baseUrl: options.baseUrl,
      tokens: options.tokens,
      ...(options.refreshTokenKey ? { refreshTokenKey: options.refreshTokenKey } : {}),
      ...(options.login ? { login: options.login } : {}),
      tokenEndpoint: () => this.oauth.tokenEndpoint(),
      version: async () => ((await this.speaksV2()) ? 2 : this.pathVersion),
      browserSignIn: () => this.browserStep({ scope: 'service' }, 'Bearer', 'sign-in to the signing service'),
      call: (request, retry, process) => this.call(request, retry, process),
    });
  }

  /**
   * The CSC API this service speaks: the cscVersion setting, else its `info` — `POST /csc/v2/info`,
   * then `/csc/v1/info`; a service with neither is taken for v1.0.4. A v2 service that lacks a
   * method esign needs is refused here, before any browser step.
   */
  protocol(): Promise<SpokenProtocol> {
    this.spoken ??= this.discover().then((spoken) => {
      this.knownV2 = spoken.version === '2';
      return spoken;
    });
    return this.spoken;
  }

  private async discover(): Promise<SpokenProtocol> {
    const setting = this.options.version ?? 'auto';
    const ask = (version: 0 | 1 | 2): Promise<ServiceInfo | undefined> =>
      this.call(buildInfoRequest(this.options.baseUrl, version, this.options.lang), 'idempotent', (status, body) =>
        processInfoResponse(status, body),
      );
    // Said to be v1 or v2, the service is still asked: its info names its methods, sign-ins and OAuth server.
    const v2 = setting === '1' || setting === '0' ? undefined : await ask(2);
    if (v2 && (v2.specs.startsWith('2') || setting === '2')) {
      await this.useInfo(v2);
      return { version: '2', specs: v2.specs, chosenBy: setting === '2' ? 'setting' : 'info' };
    }
    if (setting === '2') return { version: '2', chosenBy: 'setting' };
    const v1 = v2 ?? (await ask(this.pathVersion));
    if (v1) await this.useInfo(v1);
    return { version: '1', chosenBy: setting === 'auto' ? 'info' : 'setting', ...(v1 ? { specs: v1.specs } : {}) };
  }

  /** A service's info: the methods and sign-in esign needs are offered (else refused by name), and where its OAuth server is. */
  private async useInfo(info: ServiceInfo): Promise<void> {
    checkService(info, this.signIn.setting);
    this.methods = info.methods;
    if (this.signIn.setting === 'external' || this.oauth.setByProfile) return;
    if (info.oauth2) this.oauth.useInfoBase(info.oauth2);
    else if (info.oauth2Issuer && this.signIn.setting !== 'basic')
      this.oauth.useMetadata(await readIssuerMetadata(this.options.http, info.oauth2Issuer));
  }

  private async speaksV2(): Promise<boolean> {
    return (await this.protocol()).version === '2';
  }

  /** Every credential id of the signer, following `nextPageToken` to the end. */
  async listCredentialIDs(): Promise<string[]> {
    if (await this.speaksV2()) {
      const listed = await this.withServiceToken((token) =>
        this.call(
          buildCredentialsListRequestV2(this.options.baseUrl, token, this.options.clientData),
          'idempotent',
          (status, body) => processCredentialsListResponseV2(status, body),
        ),
      );
      for (const [id, info] of listed.infos) this.listedInfos.set(id, info);
      return listed.credentialIDs;
    }
    const ids: string[] = [];
    const seen = new Set<string>();
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const { pageSize: maxResults, clientData } = this.options;
      const options = {
        maxResults,
        pathVersion: this.pathVersion,
        ...(pageToken === undefined ? {} : { pageToken }),
        ...(clientData === undefined ? {} : { clientData }),
      };
      const result = await this.withServiceToken((token) =>
        this.call(buildCredentialsListRequest(this.options.baseUrl, token, options), 'idempotent', (status, body) =>
          processCredentialsListResponse(status, body),
        ),
      );
      ids.push(...result.credentialIDs);
      if (!result.nextPageToken) return ids;
      if (seen.has(result.nextPageToken))
        throw new EsignError('CSC_BAD_RESPONSE', 'The signing service repeated a nextPageToken in credentials/list.');
      seen.add(result.nextPageToken);
      pageToken = result.nextPageToken;
    }
    throw new EsignError(
      'CSC_BAD_RESPONSE',
      `The signing service returned more than ${MAX_PAGES} pages of credentials.`,
    );
  }

  async credentialInfo(credentialID: string): Promise<CredentialInfo> {
    if (await this.speaksV2()) {
      return (
        this.listedInfos.get(credentialID) ??
        this.withServiceToken((token) =>
          this.call(
            buildCredentialsInfoRequestV2(this.options.baseUrl, token, credentialID),
            'idempotent',
            (status, body) => processCredentialsInfoResponseV2(status, body, credentialID),
          ),
        )
      );
    }
    const ask = (certInfo: boolean) =>
      this.withServiceToken((token) =>
        this.call(
          buildCredentialsInfoRequest(this.options.baseUrl, token, credentialID, {
            certInfo,
            pathVersion: this.pathVersion,
          }),
          'idempotent',
          (status, body) => processCredentialsInfoResponse(status, body, credentialID),
        ),
      );
    try {
      return await ask(true);
    } catch (error) {
      // certInfo is a convenience esign does not need (it reads the certificate); a service that
      // has not implemented it (certomancer-csc-dummy answers 501) is asked without it.
      if (!isEsignError(error) || error.details?.['status'] !== 501) throw error;
      return ask(false);
    }
  }

  /**
   * Ids and info of every credential (info calls run concurrently). A credential whose info the
   * service fails to give is set apart with its error, so the others are still listed; when none
   * can be read, the first error is the answer.
   */
  async listCredentials(): Promise<{
    infos: CredentialInfo[];
    unreadable: { credentialID: string; error: unknown }[];
  }> {
    const ids = await this.listCredentialIDs();
    // One sign-in first, so that concurrent calls do not each open a browser.
    if (ids.length > 0) await this.serviceToken();
    const settled = await Promise.allSettled(ids.map((id) => this.credentialInfo(id)));
    const infos = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const unreadable = settled.flatMap((result, index) =>
      result.status === 'rejected' ? [{ credentialID: ids[index]!, error: result.reason as unknown }] : [],
    );
    if (infos.length === 0 && unreadable.length > 0) throw unreadable[0]!.error;
    return { infos, unreadable };
  }

  /** The credential's chain and key length, after checking that it may sign. */
  async signingCredential(credentialID: string): Promise<SigningCredential> {
    const info = await this.credentialInfo(credentialID);
    if (info.status !== 'enabled') {
      throw new EsignError('CREDENTIAL_DISABLED', `The credential ${credentialID} is disabled and cannot sign.`, {
        hint: 'Choose an enabled credential: esign credentials list, then esign credentials use ID.',
        details: { credentialID },
      });
    }
    const {
      certificates,
      keyLengthBits,
      signaturesPerApproval,
      signAlgorithm,
      signAlgorithmParams,
      scheme,
      authMode,
      pin,
      otp,
    } = this.forSigning(info);
    return {
      credentialID,
      certificates,
      keyLengthBits,
      signaturesPerApproval,
      signAlgorithm,
      ...(signAlgorithmParams ? { signAlgorithmParams } : {}),
      scheme,
      authMode,
      ...(pin ? { pin } : {}),
      ...(otp ? { otp } : {}),
    };
  }

  /**
   * Before any document is prepared: everything this credential's authorization will need can be
   * had in this run (a PIN, an OTP, a person at a browser), or an error says what to pass.
   */
  async readyToAuthorize(credential: SigningCredential): Promise<void> {
    if (credential.authMode === 'explicit') await this.factors().ready(credential);
  }

  /**
   * The credential as the signing flow uses it, with this profile's signing terms (and `--digest`,
   * when given); refused when its certificate is not valid now, whatever the service says of the key.
   */
  forSigning(info: CredentialInfo, digest?: DigestName): CredentialInfo & SigningCredential {
    if (info.certificates[0])
      assertCertificateCurrent(info.credentialID, info.certificates[0], this.options.clock.now());
    return { ...info, ...signingTerms(info, this.options.maxSignatures, digest) };
  }

  /**
   * Signs SHA-256 hashes: per batch of at most `signaturesPerApproval`, one authorization for the
   * SAD — a browser step (scope credential) for oauth2code credentials, credentials/authorize for
   * explicit and implicit ones — and one signHash call. Every signature is checked against the
   * signer certificate.
   */
  async signHashes(credential: SigningCredential, hashes: Uint8Array[]): Promise<Uint8Array[]> {
    const signatures: Uint8Array[] = [];
    const size = Math.min(credential.signaturesPerApproval, MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION);
    for (let start = 0; start < hashes.length; start += size) {
      const batch = hashes.slice(start, start + size);
      await this.serviceToken();
      const signed = await signWithCurrentSad({
        authorize: async () =>
          credential.authMode === 'oauth2code'
            ? sadOfApproval(await this.approveInBrowser(credential, batch))
            : this.authorizeCredential(credential, batch),
        extend:
          this.methods.includes('credentials/extendTransaction') && !(await this.speaksV2())
            ? (sad) => this.extendTransaction(credential, batch, sad)
            : undefined,
        sign: (sad) => this.signWithSad(credential, batch, sad, start),
      });
      signatures.push(...signed);
    }
    return signatures;
  }

  /** credentials/extendTransaction (v1.0.4 §11.7): a new SAD for the batch before the current one lapses. */
  private extendTransaction(
    credential: SigningCredential,
    hashes: Uint8Array[],
    sad: string,
  ): Promise<CredentialAuthorization> {
    const { baseUrl } = this.options;
    return this.withServiceToken((token) =>
      this.call(
        buildExtendTransactionRequest({
          baseUrl,
          pathVersion: this.pathVersion,
          accessToken: token,
          credentialID: credential.credentialID,
          sad,
          hashes,
        }),
        'never',
        processExtendTransactionResponse,
      ),
    );
  }

  private approveInBrowser(credential: SigningCredential, batch: Uint8Array[]) {
    return this.browserStep(
      { scope: 'credential', credentialID: credential.credentialID, hashes: batch },
      'SAD',
      `approval of ${batch.length} signature${batch.length === 1 ? '' : 's'} with ${credential.credentialID}`,
    );
  }

  /**
   * `credentials/authorize` for one batch, with its hashes (SCAL 2 needs them; SCAL 1 takes them),
   * the PIN and the OTP. A computed OTP refused (a service takes each code once) is tried once more
   * with the next time step's; a wrong PIN is never sent twice.
   */
  private async authorizeCredential(
    credential: SigningCredential,
    hashes: Uint8Array[],
  ): Promise<CredentialAuthorization> {
    const factors = credential.authMode === 'explicit' ? this.factors() : undefined;
    const pin = await factors?.pin(credential);
    const attempt = async (again: boolean): Promise<CredentialAuthorization> => {
      if (credential.authMode === 'explicit' && credential.otp?.type === 'online') await this.sendOtp(credential);
      const otp = await factors?.otp(credential, again);
      const v2 = await this.speaksV2();
      return this.withServiceToken((token) => {
        const params = {
          baseUrl: this.options.baseUrl,
          pathVersion: this.pathVersion,
          accessToken: token,
          credentialID: credential.credentialID,
          hashes,
          ...(pin === undefined ? {} : { pin }),
          ...(otp === undefined ? {} : { otp }),
        };
        return this.call(
          v2 ? buildCredentialsAuthorizeRequestV2(params) : buildCredentialsAuthorizeRequest(params),
          'never',
          processAuthorizeResponse,
        );
      });
    };
    try {
      return await attempt(false);
    } catch (error) {
      if (!isEsignError(error, 'AUTH_OTP_INVALID') || !factors?.computesOtp(credential)) throw error;
      return attempt(true);
    }
  }

  /** Where the PIN and OTP of explicit credentials come from (the cli gives it for signing runs). */
  private factors(): AuthorizationFactors {
    if (!this.options.factors)
      throw new EsignError('INTERNAL', 'No source of PINs and OTPs was given to the signing client.');
    return this.options.factors;
  }

  /** `credentials/sendOTP`: the service sends the user a one-time password. */
  private async sendOtp(credential: SigningCredential): Promise<void> {
    const v2 = await this.speaksV2();
    await this.withServiceToken((token) =>
      this.call(
        buildSendOtpRequest(this.options.baseUrl, v2 ? 2 : this.pathVersion, token, credential.credentialID),
        'never',
        processSendOtpResponse,
      ),
    );
    const where = credential.otp?.description ?? credential.otp?.label;
    this.options.progress?.(`The signing service sent a one-time password${where ? ` (${where})` : ''}.`);
  }

  /**
   * The authorization URL for a credential step that completes in a later run (`sign --prepare`),
   * and the PKCE verifier that run will need with the code.
   */
  async credentialAuthorizationUrl(
    credentialID: string,
    hashes: Uint8Array[],
    redirectUri: string,
    state: string,
  ): Promise<{ url: string; codeVerifier: string }> {
    await this.protocol();
    const pkce = newPkce();
    return {
      url: this.authorizeUrl({ scope: 'credential', credentialID, hashes }, redirectUri, state, pkce.codeChallenge),
      codeVerifier: pkce.codeVerifier,
    };
  }

  /** Completes a step begun with `credentialAuthorizationUrl`: code → SAD → signHash, each signature checked. */
  async signWithAuthorizationCode(
    credential: SigningCredential,
    hashes: Uint8Array[],
    code: string,
    redirectUri: string,
    codeVerifier: string,
  ): Promise<Uint8Array[]> {
    await this.serviceToken();
    const sad = await this.exchangeCode(
      code,
      redirectUri,
      codeVerifier,
      'SAD',
      this.detailsOf({ scope: 'credential', credentialID: credential.credentialID, hashes }),
    );
    return this.signWithSad(credential, hashes, sad.accessToken, 0);
  }

  /** One signHash call for hashes covered by `sad`; every signature is verified before it is returned. */
  private async signWithSad(
    credential: SigningCredential,
    hashes: Uint8Array[],
    sad: string,
    offset: number,
  ): Promise<Uint8Array[]> {
    const signer = credential.certificates[0];
    if (!signer)
      throw new EsignError(
        'CSC_BAD_RESPONSE',
        `The signing service gave no certificate for ${credential.credentialID}.`,
      );
    const v2 = await this.speaksV2();
    const { baseUrl } = this.options;
    const signed =
      v2 && this.options.sadAsBearer
        ? await this.signHashWithSadAsBearer(credential, hashes, sad)
        : await this.withServiceToken((token) =>
            this.call(
              v2
                ? buildSignHashRequestV2({
                    baseUrl,
                    accessToken: token,
                    ...signHashAlgorithm(credential),
                    credentialID: credential.credentialID,
                    sad,
                    hashes,
                  })
                : buildSignHashRequest({
                    baseUrl,
                    pathVersion: this.pathVersion,
                    accessToken: token,
                    ...signHashAlgorithm(credential),
                    credentialID: credential.credentialID,
                    sad,
                    hashes,
                  }),
              'never',
              (status, body) => processSignHashResponse(status, body, hashes.length),
            ),
          );
    return signed.map((signature, index) => {
      const accepted = acceptedSignatureValue(signer, credential.scheme, hashes[index] as Uint8Array, signature);
      if (!accepted) {
        throw new EsignError(
          'CSC_SIGNATURE_INVALID',
          `The signing service returned a signature that does not verify as ${schemeLabel(credential.scheme)} with the certificate of ${credential.credentialID} (wrong value, length or encoding).`,
          {
            hint: 'Nothing was written. Try again; if it repeats, report it to the service operator.',
            details: { credentialID: credential.credentialID, index: offset + index },
          },
        );
      }
      return accepted;
    });
  }

  /**
   * v2 signHash with the SAD as the only token. A 401 then is about the SAD, not the service
   * token: it is reported as such, and no new sign-in is asked for.
   */
  private async signHashWithSadAsBearer(
    credential: SigningCredential,
    hashes: Uint8Array[],
    sad: string,
  ): Promise<Uint8Array[]> {
    const request = buildSignHashRequestV2({
      baseUrl: this.options.baseUrl,
      accessToken: sad,
      ...signHashAlgorithm(credential),
      credentialID: credential.credentialID,
      sad,
      hashes,
      sadAsBearer: true,
    });
    try {
      return await this.call(request, 'never', (status, body) => processSignHashResponse(status, body, hashes.length));
    } catch (error) {
      if (!isEsignError(error) || error.code !== 'CSC_UNAUTHORIZED') throw error;
      const said =
        typeof error.details?.['error_description'] === 'string' ? error.details['error_description'] : undefined;
      const expired = /expired/i.test(said ?? '');
      throw new EsignError(
        expired ? 'CSC_SAD_EXPIRED' : 'CSC_SAD_INVALID',
        `The signing service refused the signature authorization (SAD) sent as the Bearer token of signHash${said ? ` (${said})` : ''}.`,
        {
          hint: expired
            ? 'Run the command again and sign within 5 minutes of approving.'
            : 'Check the cscSadAsBearer setting with the provider; run the command again.',
          ...(error.details ? { details: error.details } : {}),
        },
      );
    }
  }

  /** Forgets the cached service token. */
  async forgetServiceToken(): Promise<void> {
    this.heldToken = undefined;
    await this.options.tokens.delete(this.options.tokenKey);
  }

  /** Whether a fresh service token is cached (so no browser step is needed for the next call). */
  async hasServiceToken(): Promise<boolean> {
    return (await this.cachedServiceToken()) !== undefined;
  }

  /**
   * The cached service token while fresh; otherwise a sign-in as the serviceAuth setting says:
   * one browser step (scope service), the client's own credentials, or auth/login (with the
   * refresh token of an earlier login when there is one).
   */
  async serviceToken(): Promise<string | undefined> {
    await this.protocol();
    const cached = await this.cachedServiceToken();
    if (cached) return cached;
    const signedIn = await this.signIn.signIn();
    return signedIn && this.cacheServiceToken(signedIn);
  }

  /** Whether the service sign-in needs a person at a browser in this run. */
  signInNeedsBrowser(): boolean {
    return this.signIn.needsBrowser;
  }

  /**
   * The token store is read once a run, not at every call (each read is four file operations):
   * the token read or obtained is held until it expires or the service rejects it.
   */
  private async cachedServiceToken(): Promise<string | undefined> {
    this.heldToken ??= await this.options.tokens.get(this.options.tokenKey);
    return isFresh(this.heldToken, this.options.clock.now().getTime()) ? this.heldToken.accessToken : undefined;
  }

  /**
   * A service sign-in that a person finishes elsewhere (the split flow in CI): the URL to open,
   * and the PKCE verifier `finishServiceSignIn` will need with the code from the redirect.
   */
  startServiceSignIn(redirectUri: string, state: string): { url: string; codeVerifier: string } {
    const pkce = newPkce();
    return {
      url: this.authorizeUrl({ scope: 'service' }, redirectUri, state, pkce.codeChallenge),
      codeVerifier: pkce.codeVerifier,
    };
  }

  /** Exchanges the code of a sign-in begun with `startServiceSignIn`, and caches the service token. */
  async finishServiceSignIn(code: string, redirectUri: string, codeVerifier: string): Promise<void> {
    await this.cacheServiceToken(await this.exchangeCode(code, redirectUri, codeVerifier, 'Bearer'));
  }

  private async cacheServiceToken(token: { accessToken: string; expiresIn?: number }): Promise<string> {
    const expiresIn = token.expiresIn ?? SERVICE_TOKEN_LIFETIME_S;
    this.heldToken = {
      accessToken: token.accessToken,
      tokenType: 'Bearer',
      expiresAt: this.options.clock.now().getTime() + expiresIn * 1000,
    };
    await this.options.tokens.set(this.options.tokenKey, this.heldToken);
    return token.accessToken;
  }

  /** Runs a call with the service token (none for external); after a 401, signs in once more and repeats it once. */
  private async withServiceToken<T>(call: (token: string | undefined) => Promise<T>): Promise<T> {
    try {
      return await call(await this.serviceToken());
    } catch (error) {
      if (!isEsignError(error, 'CSC_UNAUTHORIZED') || this.signIn.setting === 'external') throw error;
      await this.forgetServiceToken();
      const fresh = await this.serviceToken();
      try {
        return await call(fresh);
      } catch (again) {
        throw isEsignError(again, 'CSC_UNAUTHORIZED') ? refusedAfterFreshSignIn(again) : again;
      }
    }
  }

  /** Needs the protocol known (`protocol()` awaited) for scope credential; scope service is the same in both. */
  private authorizeUrl(scoped: AuthorizationScope, redirectUri: string, state: string, codeChallenge: string): string {
    const { clientId, lang } = this.options;
    if (!clientId) {
      throw new EsignError(
        'CONFIG_MISSING',
        'This step is approved in a browser, at the OAuth server of the signing service, and no client ID is set for it.',
        {
          hint: 'Set ESIGN_CLIENT_ID (or esign config set clientId ID) to the client the provider registered for esign.',
        },
      );
    }
    const params = {
      ...this.oauth.authorizeParams(),
      clientId,
      codeChallenge,
      ...(lang ? { lang } : {}),
      ...scoped,
      redirectUri,
      state,
    } as AuthorizeParams;
    return this.knownV2
      ? buildAuthorizeUrlV2(params, { authorizationDetails: this.options.authorizationDetails ?? false })
      : buildAuthorizeUrl(params);
  }

  private async browserStep(scoped: AuthorizationScope, expected: 'Bearer' | 'SAD', purpose: string) {
    const { codeVerifier, codeChallenge } = newPkce();
    // Built once up front so that a request that cannot be sent (51 hashes) fails before the browser opens.
    this.authorizeUrl(scoped, 'http://127.0.0.1/', 'check', codeChallenge);
    const { code, redirectUri } = await this.options.authorize({
      purpose,
      buildAuthorizeUrl: (redirect, state) => this.authorizeUrl(scoped, redirect, state, codeChallenge),
    });
    return this.exchangeCode(code, redirectUri, codeVerifier, expected, this.detailsOf(scoped));
  }

  /** The authorization_details a v2 credential step was asked with, when it was (cscAuthorizationDetails). */
  private detailsOf(scoped: AuthorizationScope): string | undefined {
    if (!this.knownV2 || !this.options.authorizationDetails || scoped.scope !== 'credential') return undefined;
    return credentialAuthorizationDetails(scoped.credentialID, scoped.hashes);
  }

  private exchangeCode(
    code: string,
    redirectUri: string,
    codeVerifier: string,
    expected: 'Bearer' | 'SAD',
    authorizationDetails?: string,
  ) {
    const request = buildTokenRequest({
      ...this.oauth.tokenEndpoint(),
      baseUrl: this.options.baseUrl,
      code,
      redirectUri,
      codeVerifier,
      ...(authorizationDetails ? { authorizationDetails } : {}),
    });
    // A v2 service answers scope credential with a Bearer token that is the SAD.
    const alsoAccepted = expected === 'SAD' && this.knownV2 ? (['Bearer'] as const) : [];
    return this.call(request, 'never', (status, body) => processTokenResponse(status, body, expected, alsoAccepted));
  }

  private async call<T>(
    request: PreparedRequest,
    retry: 'idempotent' | 'never',
    process: (status: number, body: Buffer) => T,
  ): Promise<T> {
    const { apiKey } = this.options;
    const headers = apiKey ? { ...request.headers, [apiKey.header.toLowerCase()]: apiKey.value } : request.headers;
    const response: HttpResponse = await this.options.http.request({ ...request, headers, retry, service: SERVICE });
    return process(response.status, response.body);
  }
}

/** `signAlgo` and, for RSASSA-PSS, `signAlgoParams` of a credential's signHash calls. */
function signHashAlgorithm(credential: SigningCredential): { signAlgo: string; signAlgoParams?: string } {
  return {
    signAlgo: credential.signAlgorithm,
    ...(credential.signAlgorithmParams ? { signAlgoParams: credential.signAlgorithmParams } : {}),
  };
}
