/**
 * The storage authorization service (seed 002 part A) under `/storage`: `POST /v1/credentials`
 * turns an identity access token with scope `com.vendor.storage` into temporary credentials for the
 * caller's own bucket on the sandbox S3 server, which this mount starts (and stops on close).
 *
 * Test switches (sandbox only), through the host's control endpoint `POST /_sandbox/storage` with
 * `{"fail": "internal-error" | "identity-unavailable" | "storage-unavailable", "times"?: n}`: the
 * next n credential requests answer the seed's 500 or one of its two 502 causes, as Problem Details.
 * `DELETE /_sandbox/faults` clears them with the other faults.
 */
import { randomUUID } from 'node:crypto';
import type { CloseFn, SandboxDeps, SharedServices } from '../deps.js';
import type { FaultInjector } from '../faults.js';
import { bearerToken, html, json, problem, type Router, type SandboxRequest, type SandboxResponse } from '../http.js';
import { CredentialIssuer, S3_REGION, STORAGE_SCOPE } from './credentials.js';
import { startS3Server, type S3Server } from './s3.js';

/** The seed's error causes of `POST /v1/credentials` beyond the token checks, as the switches name them. */
export const STORAGE_FAILURES = {
  'internal-error': {
    status: 500,
    title: 'Internal Server Error',
    detail: 'An unexpected error occurred while issuing storage credentials.',
  },
  'identity-unavailable': {
    status: 502,
    title: 'Bad Gateway',
    detail: 'The identification service is unavailable: identity service unavailable.',
  },
  'storage-unavailable': {
    status: 502,
    title: 'Bad Gateway',
    detail: 'The storage service is unavailable: storage side unavailable.',
  },
} as const;
export type StorageFailure = keyof typeof STORAGE_FAILURES;

/** Test and operator handles on a running storage service (see `storageControl`). */
export interface StorageControl {
  issuer: CredentialIssuer;
  s3: S3Server;
  /** Makes the service answer 502 "storage side unavailable" (and the S3 endpoint 503) until reset. */
  storageUnavailable: boolean;
  /** Failures armed by the switches, one per coming credential request. */
  armed: StorageFailure[];
}

/** What the host lends the storage mount: its fault injector and request log, which then cover S3 too. */
export interface StorageHostHooks {
  faults?: FaultInjector;
  requestLog?: string[];
}

const controls = new WeakMap<SharedServices, StorageControl>();

/** The storage service of a sandbox (`sandbox.shared`), for tests: lifetimes, the 502 switch. */
export function storageControl(sandbox: { shared: SharedServices }): StorageControl {
  const control = controls.get(sandbox.shared);
  if (!control) throw new Error('the storage service is not running in this sandbox (start it with s3: true)');
  return control;
}

/** `POST /_sandbox/storage`: arms `{fail, times?}` (see the top of this file). */
export function storageSwitch(shared: SharedServices, body: Record<string, unknown> | undefined): SandboxResponse {
  const control = controls.get(shared);
  const fail = body?.['fail'];
  const times = body?.['times'] ?? 1;
  if (!control)
    return json(409, {
      error: 'invalid_request',
      error_description: 'the storage service is not running in this sandbox',
    });
  if (
    typeof fail !== 'string' ||
    !(fail in STORAGE_FAILURES) ||
    typeof times !== 'number' ||
    !Number.isInteger(times) ||
    times < 1
  ) {
    return json(400, {
      error: 'invalid_request',
      error_description: `expected {"fail": ${Object.keys(STORAGE_FAILURES).join(' | ')}, "times"?: n}`,
    });
  }
  for (let index = 0; index < times; index++) control.armed.push(fail as StorageFailure);
  return json(200, { ok: true });
}

/** Clears the armed switches (with the host's other faults). */
export function clearStorageSwitches(shared: SharedServices): void {
  const control = controls.get(shared);
  if (control) control.armed = [];
}

export async function mountStorage(router: Router, deps: SandboxDeps & StorageHostHooks): Promise<CloseFn> {
  const issuer = new CredentialIssuer();
  const control = { issuer, storageUnavailable: false, armed: [] as StorageFailure[] } as StorageControl;
  const s3 = await startS3Server({
    dataDir: deps.dataDir,
    clock: deps.clock,
    issuer,
    region: S3_REGION,
    isUnavailable: () => control.storageUnavailable,
    faults: deps.faults,
    requestLog: deps.requestLog,
    ...(deps.tls ? { tls: deps.tls } : {}),
    ...(deps.hostName ? { hostName: deps.hostName } : {}),
  });
  control.s3 = s3;
  controls.set(deps.shared, control);
  deps.urls.s3 = s3.url;

  router.post('/v1/credentials', async (request) => {
    const instance = `${request.baseUrl}/v1/credentials#${randomUUID()}`;
    try {
      return await issueCredentials(request, deps, control, instance);
    } catch {
      return failed('internal-error', instance);
    }
  });
  router.get('/swagger-ui/index.html', () => html(200, SWAGGER_PAGE));
  router.get('/v3/api-docs', (request) => json(200, openApi(request.baseUrl)));

  return async () => {
    controls.delete(deps.shared);
    await s3.close();
  };
}

async function issueCredentials(
  request: SandboxRequest,
  deps: SandboxDeps,
  control: StorageControl,
  instance: string,
): Promise<SandboxResponse> {
  const challenge = { 'www-authenticate': `Bearer realm="storage", scope="${STORAGE_SCOPE}"` };
  const token = bearerToken(request);
  if (!token)
    return withHeaders(
      problem(
        401,
        'Unauthorized',
        'The Authorization header is absent; send "Authorization: Bearer <access token>".',
        instance,
      ),
      challenge,
    );
  const armed = control.armed.shift();
  if (armed === 'internal-error') throw new Error('switched');
  const introspect = deps.shared.introspectIdentityToken;
  if (!introspect || armed === 'identity-unavailable') return failed('identity-unavailable', instance);
  const info = introspect(token);
  const nowSeconds = Math.floor(deps.clock.now().getTime() / 1000);
  if (!info || !info.active || (info.exp !== undefined && info.exp <= nowSeconds)) {
    return withHeaders(problem(401, 'Unauthorized', 'The access token is invalid, expired or inactive.', instance), {
      'www-authenticate': `Bearer realm="storage", error="invalid_token"`,
    });
  }
  if (!info.scope.includes(STORAGE_SCOPE)) {
    return withHeaders(
      problem(401, 'Unauthorized', `The access token was not issued with scope ${STORAGE_SCOPE}.`, instance),
      {
        'www-authenticate': `Bearer realm="storage", error="insufficient_scope", scope="${STORAGE_SCOPE}"`,
      },
    );
  }
  const missing = (['sub', 'client_id'] as const).filter((claim) => !info[claim]);
  if (missing.length > 0)
    return problem(
      400,
      'Bad Request',
      `The access token lacks the required claim${missing.length > 1 ? 's' : ''} ${missing.join(' and ')}.`,
      instance,
    );
  if (control.storageUnavailable || armed === 'storage-unavailable') return failed('storage-unavailable', instance);

  const issued = control.issuer.issue(info.client_id as string, info.sub as string, deps.clock.now());
  await control.s3.ensureBucket(issued.bucket);
  return json(200, {
    bucket: issued.bucket,
    endpoint: control.s3.url,
    credentials: {
      accessKeyId: issued.accessKeyId,
      secretAccessKey: issued.secretAccessKey,
      sessionToken: issued.sessionToken,
      expiration: issued.expiration.toISOString(),
    },
  });
}

function failed(cause: StorageFailure, instance: string): SandboxResponse {
  const { status, title, detail } = STORAGE_FAILURES[cause];
  return problem(status, title, detail, instance);
}

function withHeaders(response: SandboxResponse, headers: Record<string, string>): SandboxResponse {
  return { ...response, headers: { ...response.headers, ...headers } };
}

function openApi(baseUrl: string): object {
  const problemRef = { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
  return {
    openapi: '3.0.3',
    info: { title: 'Storage authorization (sandbox)', version: '1' },
    servers: [{ url: baseUrl }],
    paths: {
      '/v1/credentials': {
        post: {
          summary: "Temporary credentials for the caller's bucket (created on first call)",
          security: [{ bearer: [STORAGE_SCOPE] }],
          responses: {
            '200': {
              description: 'Credentials',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/StorageCredentials' } } },
            },
            '400': { description: 'The token lacks sub or client_id', ...problemRef },
            '401': { description: 'No token, or an invalid or inactive one', ...problemRef },
            '500': { description: 'Unexpected internal error', ...problemRef },
            '502': { description: 'Identification or storage service unavailable', ...problemRef },
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        StorageCredentials: {
          type: 'object',
          required: ['bucket', 'endpoint', 'credentials'],
          properties: {
            bucket: { type: 'string' },
            endpoint: { type: 'string', format: 'uri' },
            credentials: {
              type: 'object',
              required: ['accessKeyId', 'secretAccessKey', 'sessionToken', 'expiration'],
              properties: {
                accessKeyId: { type: 'string' },
                secretAccessKey: { type: 'string' },
                sessionToken: { type: 'string' },
                expiration: { type: 'string', format: 'date-time' },
              },
            },
          },
        },
        Problem: {
          type: 'object',
          properties: {
            type: { type: 'string', format: 'uri' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            instance: { type: 'string', format: 'uri' },
          },
        },
      },
    },
  };
}

const SWAGGER_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Storage authorization — sandbox API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}</style></head>
<body><h1>Storage authorization (sandbox)</h1>
<p>The OpenAPI document is at <a href="../v3/api-docs"><code>/v3/api-docs</code></a>.</p>
<h2><code>POST /v1/credentials</code></h2>
<p>Header <code>Authorization: Bearer &lt;access token&gt;</code>, issued with scope <code>${STORAGE_SCOPE}</code> and carrying the claims
<code>sub</code> and <code>client_id</code>. No body. Answers <code>{bucket, endpoint, credentials: {accessKeyId, secretAccessKey, sessionToken, expiration}}</code>;
the credentials last one hour and allow <code>s3:GetObject</code>, <code>s3:PutObject</code>, <code>s3:DeleteObject</code> and <code>s3:ListBucket</code> on that bucket only.</p>
<p>Errors are RFC 9457 Problem Details: 400 missing claim, 401 absent, invalid or inactive token, 500 internal error, 502 identification or storage service unavailable.</p>
</body></html>
`;
