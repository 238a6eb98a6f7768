/**
 * Where the signing service's OAuth 2.0 server is, and how esign talks to it: the settings
 * (oauthUrl, oauthAuthorizeUrl, oauthTokenUrl) first, then what the service's info says
 * (`oauth2`, or the RFC 8414 metadata of `oauth2Issuer`), else the API's own base URL. The token
 * request's body and client authentication, the hash encoding and the account_token are the
 * provider's settings, handed to the pure builders of `core/csc/requests.ts` as parameters.
 */
import { randomUUID } from 'node:crypto';
import { EsignError } from '../core/errors.js';
import type { Clock } from '../core/ports.js';
import type { ClientAuthSetting, HashEncodingSetting, TokenRequestSetting } from '../core/profile.js';
import {
  authorizationServerMetadataUrls,
  processAuthorizationServerMetadata,
  type AuthorizationServer,
} from '../core/csc/oauth-metadata.js';
import { buildAccountToken, endpoint, type TokenEndpoint } from '../core/csc/requests.js';
import { badResponse } from '../core/csc/responses.js';
import { assertSecureUrl, type HttpClient } from './http.js';

/** A provider's OAuth settings; every one optional, the specification's way when absent. */
export interface OAuthSettings {
  /** The OAuth server's base URL, apart from the API's. */
  oauthUrl?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  tokenRequest?: TokenRequestSetting;
  clientAuth?: ClientAuthSetting;
  hashEncoding?: HashEncodingSetting;
  /** Sends a CSC account_token (§8.3.1) with this Account ID as its sub. */
  accountId?: string;
}

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  clientSecretInBody: boolean;
  clock: Clock;
}

export class OAuthEndpoints {
  /** From the service's info: `oauth2`, trimmed to its base. */
  private infoBase: string | undefined;
  /** From the service's info: the metadata of its `oauth2Issuer`. */
  private server: AuthorizationServer | undefined;

  constructor(
    private readonly apiBaseUrl: string,
    private readonly settings: OAuthSettings,
    private readonly client: OAuthClient,
  ) {}

  /** Whether the settings say where the OAuth server is, so that the service's info need not. */
  get setByProfile(): boolean {
    return Boolean(this.settings.oauthUrl || (this.settings.authorizeUrl && this.settings.tokenUrl));
  }

  /** The OAuth server the service's info names by `oauth2`. */
  useInfoBase(url: string): void {
    this.infoBase = oauthServerOf(url);
  }

  /** The OAuth server the service's info names by `oauth2Issuer`, as its metadata describes it. */
  useMetadata(server: AuthorizationServer): void {
    this.server = server;
  }

  /** Where `/oauth2/*` lives when no endpoint is named one by one. */
  private base(): string {
    return this.settings.oauthUrl ?? this.infoBase ?? this.apiBaseUrl;
  }

  tokenEndpoint(): TokenEndpoint {
    const { clientId, clientSecret, clientSecretInBody } = this.client;
    const { oauthUrl, tokenUrl, tokenRequest, clientAuth } = this.settings;
    return {
      tokenUrl:
        tokenUrl ?? (oauthUrl ? undefined : this.server?.tokenEndpoint) ?? endpoint(this.base(), '/oauth2/token'),
      clientId,
      clientSecret,
      clientSecretInBody,
      ...(clientAuth ? { clientAuth } : {}),
      ...(tokenRequest ? { encoding: tokenRequest } : {}),
    };
  }

  /** What the authorization URL builders take besides the request itself; a fresh account_token each time. */
  authorizeParams(): {
    baseUrl: string;
    authorizeUrl?: string;
    hashEncoding?: HashEncodingSetting;
    accountToken?: string;
  } {
    const { oauthUrl, authorizeUrl, hashEncoding, accountId } = this.settings;
    const fromMetadata = oauthUrl ? undefined : this.server?.authorizationEndpoint;
    const named = authorizeUrl ?? fromMetadata;
    return {
      baseUrl: this.base(),
      ...(named ? { authorizeUrl: named } : {}),
      ...(hashEncoding ? { hashEncoding } : {}),
      ...(accountId ? { accountToken: this.accountToken(accountId) } : {}),
    };
  }

  private accountToken(accountId: string): string {
    const { clientId, clientSecret, clock } = this.client;
    if (!clientSecret)
      throw new EsignError(
        'CONFIG_MISSING',
        'The account_token (accountToken on) needs the client secret, and none is set.',
        { hint: 'Set ESIGN_CLIENT_SECRET.' },
      );
    return buildAccountToken({
      accountId,
      clientId,
      clientSecret,
      issuedAtS: Math.floor(clock.now().getTime() / 1000),
      jti: randomUUID(),
      issuer: 'esign',
    });
  }
}

/**
 * The OAuth 2.0 server a service's info names: https://, or http:// on loopback only. Some give the
 * full `…/oauth2/authorize` URL for the base URI: it is trimmed to its base.
 */
export function oauthServerOf(url: string): string {
  try {
    return assertSecureUrl(url.replace(/\/oauth2\/authorize\/?$/, ''), 'OAuth 2.0 server').toString();
  } catch (error) {
    throw badResponse(
      'info',
      `names an OAuth 2.0 server esign will not use (${(error as Error).message.replace(/\.$/, '')})`,
    );
  }
}

/** RFC 8414: the metadata, path-inserted first, then appended after a 404; its issuer checked against the one named. */
export async function readIssuerMetadata(http: HttpClient, issuer: string): Promise<AuthorizationServer> {
  const [first, ...others] = authorizationServerMetadataUrls(oauthServerOf(issuer));
  const ask = (url: string) =>
    http.request({
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
      retry: 'idempotent',
      service: 'signing service',
    });
  let response = await ask(first!);
  for (const url of others) if (response.status === 404) response = await ask(url);
  return processAuthorizationServerMetadata(response.status, response.body, issuer);
}
