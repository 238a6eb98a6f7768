/**
 * Where a CSC service's OAuth 2.0 server is: the base URI its info names (`oauth2`), or the
 * endpoints in the RFC 8414 metadata of its `oauth2Issuer` (v2).
 */
import { badResponse } from '../core/csc/responses.js';
import { authorizationServerMetadataUrls, processAuthorizationServerMetadata, type AuthorizationServer } from '../core/csc/oauth-metadata.js';
import { assertSecureUrl, type HttpClient } from './http.js';

/** RFC 8414: the metadata, path-inserted first, then appended after a 404; its issuer checked against the one named. */
export async function readIssuerMetadata(http: HttpClient, issuer: string): Promise<AuthorizationServer> {
  const [first, ...others] = authorizationServerMetadataUrls(oauthServerOf(issuer));
  const ask = (url: string) => http.request({ method: 'GET', url, headers: { accept: 'application/json' }, retry: 'idempotent', service: 'signing service' });
  let response = await ask(first!);
  for (const url of others) if (response.status === 404) response = await ask(url);
  return processAuthorizationServerMetadata(response.status, response.body, issuer);
}

/**
 * The OAuth 2.0 server a service's info names: https://, or http:// on loopback only. Some give the
 * full `…/oauth2/authorize` URL for the base URI: it is trimmed to its base.
 */
export function oauthServerOf(url: string): string {
  try {
    return assertSecureUrl(url.replace(/\/oauth2\/authorize\/?$/, ''), 'OAuth 2.0 server').toString();
  } catch (error) {
    throw badResponse('info', `names an OAuth 2.0 server esign will not use (${(error as Error).message.replace(/\.$/, '')})`);
  }
}
