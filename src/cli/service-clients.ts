/**
 * The clients of the remote services, built from a profile and the context: composition only, so
 * it lives on the cli floor and io's clients take plain settings (every import points down).
 */
import { basename } from 'node:path';
import { EsignError } from '../core/errors.js';
import { CscClient, type AuthorizationFactors } from '../io/csc-client.js';
import { completeChain } from '../io/chain-completion.js';
import { createRevocationClient } from '../io/revocation-client.js';
import type { SigningCredential } from '../core/ports.js';
import {
  assertDistinctKeys,
  formatSize,
  objectKey,
  openStorageSession,
  progressBar,
  type StorageSession,
  type StoredObject,
} from '../io/storage-client.js';
import { loadTrustAnchors, TsaClient } from '../io/tsa-client.js';
import type { Context, ResolvedProfile } from './context.js';
import { listedIssuersOf, listedTsaCertificates } from './trusted-lists.js';

/**
 * The CSC client for a profile (default: the active one), its service token cached per profile,
 * service URL and kind of sign-in; `factors` gives the PIN and OTP of explicit credentials.
 */
export async function createCscClient(
  ctx: Context,
  profile?: ResolvedProfile,
  factors?: AuthorizationFactors,
): Promise<CscClient> {
  const resolved = profile ?? (await ctx.profile());
  const baseUrl = ctx.require(resolved, 'signingBaseUrl');
  const { signingUsername: username, signingPassword: password } = resolved.secrets;
  const serviceAuth = resolved.settings.serviceAuth ?? 'browser';
  const clientSecret = resolved.secrets.clientSecret ?? '';
  // auth/login and external sign-ins need no client secret (until a credential needs a browser approval), nor a client that authenticates with none.
  if (
    !clientSecret &&
    serviceAuth !== 'basic' &&
    serviceAuth !== 'external' &&
    resolved.settings.clientAuth !== 'none'
  ) {
    throw new EsignError(
      'CONFIG_MISSING',
      `The profile ${JSON.stringify(resolved.name)} has no client secret for the signing service.`,
      {
        hint: 'Set ESIGN_CLIENT_SECRET, or CLIENT_SECRET= in the secrets file (esign config set secretsFile PATH).',
      },
    );
  }
  const { settings } = resolved;
  return new CscClient({
    baseUrl,
    oauth: {
      ...(settings.oauthUrl ? { oauthUrl: settings.oauthUrl } : {}),
      ...(settings.oauthAuthorizeUrl ? { authorizeUrl: settings.oauthAuthorizeUrl } : {}),
      ...(settings.oauthTokenUrl ? { tokenUrl: settings.oauthTokenUrl } : {}),
      ...(settings.tokenRequest ? { tokenRequest: settings.tokenRequest } : {}),
      ...(settings.clientAuth ? { clientAuth: settings.clientAuth } : {}),
      ...(settings.hashEncoding ? { hashEncoding: settings.hashEncoding } : {}),
      ...(settings.accountToken && settings.accountId ? { accountId: settings.accountId } : {}),
    },
    ...(settings.cscClientData !== undefined ? { clientData: settings.cscClientData } : {}),
    ...(settings.apiKeyHeader && resolved.secrets.apiKey
      ? { apiKey: { header: settings.apiKeyHeader, value: resolved.secrets.apiKey } }
      : {}),
    // An external sign-in has no OAuth client, unless a credential is approved in a browser (then the client is asked for there).
    clientId: serviceAuth === 'external' ? (settings.clientId ?? '') : ctx.require(resolved, 'clientId'),
    clientSecret,
    clientSecretInBody: resolved.settings.clientSecretInBody ?? false,
    version: resolved.settings.cscVersion ?? 'auto',
    authorizationDetails: resolved.settings.cscAuthorizationDetails ?? false,
    sadAsBearer: resolved.settings.cscSadAsBearer ?? false,
    ...(resolved.settings.cscMaxSignatures ? { maxSignatures: resolved.settings.cscMaxSignatures } : {}),
    ...(resolved.settings.lang ? { lang: resolved.settings.lang } : {}),
    http: ctx.http,
    tokens: ctx.tokens,
    // A sign-in of another kind (or as another user) is another token.
    tokenKey: `${resolved.name}:signing-service:${baseUrl}${serviceAuth === 'browser' ? '' : `:${serviceAuth}:${serviceAuth === 'basic' || serviceAuth === 'password' ? (username ?? '') : serviceAuth === 'external' ? '' : ctx.require(resolved, 'clientId')}`}`,
    refreshTokenKey: `${resolved.name}:signing-service-refresh:${baseUrl}:${username ?? ''}`,
    serviceAuth,
    ...(username !== undefined && password !== undefined ? { login: { username, password } } : {}),
    ...(factors ? { factors } : {}),
    progress: (line) => ctx.io.info(line),
    clock: ctx.clock,
    authorize: (request) => ctx.authorize(request),
  });
}

/**
 * The credential with its chain completed for the CMS when the service returned it short (from the
 * profile's trust anchors, else AIA caIssuers); a chain that ends in a root is left as it is.
 */
export async function withCompleteChain<C extends SigningCredential>(
  credential: C,
  profile: ResolvedProfile,
  ctx: Context,
): Promise<C> {
  const anchors = [
    ...(await loadTrustAnchors(profile.settings.trustAnchors ?? [])),
    ...(await listedIssuersOf(ctx, credential.certificates)),
  ];
  const revocation = createRevocationClient(ctx);
  const certificates = await completeChain(credential.credentialID, credential.certificates, {
    anchors,
    fetchCertificate: (url) => revocation.certificate(url),
    trace: (line) => ctx.io.debug(line),
  });
  return certificates.length === credential.certificates.length ? credential : { ...credential, certificates };
}

/** The profile's TSA client, or undefined when the profile names no TSA. */
export function createTsaClient(ctx: Context, profile: ResolvedProfile): TsaClient | undefined {
  const urls = profile.settings.tsaUrls ?? [];
  if (urls.length === 0) return undefined;
  const anchorPaths = profile.settings.trustAnchors ?? [];
  return new TsaClient({
    urls,
    username: profile.settings.tsaUsername,
    password: profile.secrets.tsaPassword,
    ...(profile.settings.tsaPolicy
      ? { policy: profile.settings.tsaPolicy === 'any' ? null : profile.settings.tsaPolicy }
      : {}),
    http: ctx.http,
    trustAnchors: async () => {
      // The qualified TSAs of the cached trusted lists count beside the configured anchors.
      const listAnchors = await listedTsaCertificates(ctx);
      if (anchorPaths.length === 0 && listAnchors.length === 0)
        ctx.io.warn(
          `the profile ${JSON.stringify(profile.name)} has no trustAnchors and no trusted list is cached, so the TSA's certificate chain is not checked; set them with \`esign config set trustAnchors PEM\` or run \`esign trust update\`.`,
        );
      return [...(await loadTrustAnchors(anchorPaths)), ...listAnchors];
    },
    trace: (line) => ctx.io.debug(line),
  });
}

/** Opens a storage session for the active profile, closed with the context. */
export async function openStorage(ctx: Context): Promise<StorageSession> {
  const profile = await ctx.profile({ storage: true });
  const session = await openStorageSession({
    http: ctx.http,
    tokens: ctx.tokens,
    clock: ctx.clock,
    profileName: profile.name,
    storageAuthUrl: ctx.require(profile, 'storageAuthUrl'),
    region: profile.settings.region ?? 'us-east-1',
  });
  ctx.onClose(() => session.close());
  return session;
}

/**
 * Opens storage and returns what uploads one file as `PREFIX/BASENAME`, with a progress line on a
 * TTY, and prints bucket, key, size and SHA-256 (one JSON value with --json). An existing object
 * is replaced only with `overwrite`. `esign upload` and `esign sign --upload` both use it.
 */
export async function openUploader(
  ctx: Context,
  options: { prefix?: string; overwrite?: boolean },
): Promise<(path: string) => Promise<StoredObject>> {
  const session = await openStorage(ctx);
  return async (path) => {
    const spinner = await ctx.io.spinner(`uploading ${basename(path)}`);
    try {
      const object = await session.upload(path, objectKey(options.prefix, path), {
        overwrite: options.overwrite,
        onProgress: (loaded, total) => spinner.update(`uploading ${basename(path)} ${progressBar(loaded, total)}`),
      });
      spinner.stop();
      ctx.io.result(
        { file: path, ...object },
        () => `✓ ${path} → s3://${object.bucket}/${object.key} (${formatSize(object.size)}, sha256 ${object.sha256})`,
      );
      return object;
    } catch (error) {
      spinner.fail(`${basename(path)} not uploaded`);
      throw error;
    }
  };
}

/** Uploads files one after the other; stops at the first failure (objects already stored stay). */
export async function uploadFiles(
  ctx: Context,
  paths: readonly string[],
  options: { prefix?: string; overwrite?: boolean },
): Promise<StoredObject[]> {
  assertDistinctKeys(paths, options.prefix);
  const upload = await openUploader(ctx, options);
  const stored: StoredObject[] = [];
  for (const path of paths) stored.push(await upload(path));
  return stored;
}
