/**
 * RFC 8414 authorization server metadata, for a CSC v2 service whose info names its OAuth 2.0
 * server by `oauth2Issuer` alone: where the metadata lives, and the endpoints esign uses from it.
 */
import { badResponse, okJson } from './responses.js';

export interface AuthorizationServer {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
}

/**
 * Where to ask, in order: §3.1 puts `/.well-known/oauth-authorization-server` between the host and
 * the issuer's path; some servers publish it after the path instead (the form OpenID Connect
 * Discovery uses), so that is asked next. An issuer without a path has one place.
 */
export function authorizationServerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const inserted = `${url.origin}/.well-known/oauth-authorization-server${path}`;
  return path === '' ? [inserted] : [inserted, `${url.origin}${path}/.well-known/oauth-authorization-server`];
}

/** §3.3: the issuer in the metadata must be the one asked for, to the character; the endpoints https (or loopback http). */
export function processAuthorizationServerMetadata(
  status: number,
  body: Uint8Array | string,
  issuer: string,
): AuthorizationServer {
  const operation = 'the OAuth 2.0 server metadata (RFC 8414)';
  const object = okJson(status, body, operation);
  if (object['issuer'] !== issuer)
    throw badResponse(operation, `names the issuer ${JSON.stringify(object['issuer'])}, not ${JSON.stringify(issuer)}`);
  const endpoint = (name: string): string => {
    const value = object[name];
    const url = typeof value === 'string' ? secureUrl(value) : undefined;
    if (!url) throw badResponse(operation, `has no usable ${name}`);
    return url;
  };
  return {
    issuer,
    authorizationEndpoint: endpoint('authorization_endpoint'),
    tokenEndpoint: endpoint('token_endpoint'),
  };
}

/** The URL as the WHATWG parser reads it (what is then requested), if https or loopback http. */
function secureUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  return url.protocol === 'https:' ||
    (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    ? url.toString()
    : undefined;
}
