import { randomUUID } from 'node:crypto';
import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { mkdir } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { SandboxClock } from './clock.js';
import {
  SANDBOX_SECRETS,
  type CloseFn,
  type SandboxDeps,
  type SandboxSecrets,
  type SandboxUrls,
  type SharedServices,
} from './deps.js';
import { cutShort, FaultInjector, isFaultRule, type Fault } from './faults.js';
import {
  json,
  jsonBody,
  problem,
  readRequest,
  Router,
  writeResponse,
  type SandboxRequest,
  type SandboxResponse,
} from './http.js';
import { issueTlsServerCertificate, loadOrCreatePki, type SandboxPki, type TlsServerCertificate } from './pki.js';
import { mountPki } from './pki-routes.js';
import { mountTrustLists } from './trust-lists.js';
import { mountSigning } from './signing/routes.js';
import { mountOAuthMetadata, mountSigningV2 } from './signing/routes-v2.js';
import { mountIdentity, mountIdentityLegacy } from './identity/routes.js';
import { clearStorageSwitches, mountStorage, storageSwitch, type StorageHostHooks } from './storage/routes.js';
import { mountTsa } from './tsa/routes.js';
import { isRevocationRule, RevocationSchedule } from './revocation-schedule.js';
import { isQuirkName, SandboxQuirks, type QuirkName } from './signing/quirks.js';

export type { SandboxUrls, SandboxDeps } from './deps.js';
export { SANDBOX_SECRETS } from './deps.js';
export { issuedForPort } from './pki.js';

export interface SandboxOptions {
  /** Where the PKI, serial counters and stored objects live; created if missing. */
  dataDir: string;
  /** 0 (default) picks a free port. */
  port?: number;
  autoApprove?: boolean;
  clock?: SandboxClock;
  secrets?: Partial<SandboxSecrets>;
  /** Start the S3-compatible server (default true). */
  s3?: boolean;
  /** Provider behaviours the signing service shows (`esign sandbox start --quirk NAME`). */
  quirks?: readonly QuirkName[];
  /** Where the sandbox's log lines go (the OTPs it "sends"); nowhere by default. */
  log?: (line: string) => void;
  /** Serve every emulator over HTTPS, with a certificate for localhost and 127.0.0.1 from the sandbox root. */
  tls?: boolean;
  /** How many TEST national lists to publish under /trust (default 1: ZZ); more for benchmarks. */
  trustLists?: number;
  /**
   * The host name in the sandbox's URLs (and its TLS certificate) instead of 127.0.0.1, for tests
   * that reach it through a proxy that alone resolves the name. It still listens on 127.0.0.1 only.
   */
  hostName?: string;
}

export interface Sandbox {
  urls: SandboxUrls;
  pki: SandboxPki;
  clock: SandboxClock;
  faults: FaultInjector;
  /** The quirks switched on; tests switch them between cases. */
  quirks: SandboxQuirks;
  secrets: SandboxSecrets;
  shared: SharedServices;
  autoApprove: boolean;
  /** Route ids (`signing GET /oauth2/authorize`) of every call served, for tests to count steps. */
  readonly requestLog: string[];
  /** The certificate (DER, base64) that signs the TEST LOTL at `urls.lotl`. */
  readonly lotlSignerCertificate: string;
  /** Certificates revoked while it runs (also `POST /_sandbox/revocations`). */
  readonly revocations: RevocationSchedule;
  /** Calls served and the time spent answering them, by service prefix (also `GET /_sandbox/stats`). */
  readonly serviceTime: Map<string, ServiceTime>;
  close(): Promise<void>;
}

export interface ServiceTime {
  calls: number;
  /** Wall time from the request read to the response built (the service's own work, and any waits it makes). */
  ms: number;
}

type Mount = (router: Router, deps: SandboxDeps) => void | CloseFn | Promise<void | CloseFn>;

const SERVICES: ReadonlyArray<[prefix: string, mount: Mount]> = [
  ['pki', mountPki],
  ['signing', mountSigning],
  ['signing-v2', mountSigningV2],
  ['.well-known', mountOAuthMetadata],
  ['identity', mountIdentity],
  ['identity-legacy', mountIdentityLegacy],
  ['tsa', mountTsa],
  ['storage', mountStorage],
  ['trust', mountTrustLists],
];
/** Services whose errors are RFC 9457 Problem Details (seed 002 part A), injected ones included. */
const PROBLEM_DETAILS_SERVICES = new Set(['storage']);

/**
 * Starts the emulated services on 127.0.0.1 (never another interface): one HTTP host with a path
 * prefix per service, plus control routes under `/_sandbox` for faults and the clock.
 */
export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const clock = options.clock ?? new SandboxClock();
  const faults = new FaultInjector();
  const quirks = new SandboxQuirks(options.quirks);
  const secrets = { ...SANDBOX_SECRETS, ...options.secrets };
  const routers = new Map<string, Router>();
  const sockets = new Set<Socket>();
  const requestLog: string[] = [];
  const serviceTime = new Map<string, ServiceTime>();

  const listener: RequestListener = (message: IncomingMessage, response: ServerResponse) => {
    void handle(message.url ?? '/', message.method ?? 'GET')
      .then(async (found) => {
        if (found === 'reset') {
          message.socket.destroy();
          return;
        }
        writeResponse(response, found);
      })
      .catch((error: unknown) => {
        writeResponse(
          response,
          json(500, { error: 'server_error', error_description: String((error as Error)?.message ?? error) }),
        );
      });

    async function handle(rawUrl: string, method: string): Promise<SandboxResponse | 'reset'> {
      const url = new URL(rawUrl, 'http://127.0.0.1');
      const [, prefix = '', ...rest] = url.pathname.split('/');
      const path = '/' + rest.join('/');
      if (prefix === '_sandbox') return control(await readRequest(message, path, `${urls.base}/_sandbox`));
      const router = routers.get(prefix);
      // The signing service as the quirks switched on take its requests: rewritten, or answered at once.
      const signing = prefix === 'signing' || prefix === 'signing-v2';
      const taken = signing ? quirks.request(await readRequest(message, path, `${urls.base}/${prefix}`)) : undefined;
      if (taken && 'status' in taken) {
        requestLog.push(`${prefix} ${method} ${path}`);
        return taken;
      }
      const route = router?.find(method, taken?.path ?? path);
      if (!router || !route) {
        if (!taken) await readRequest(message, path, '');
        return router?.hasPath(taken?.path ?? path)
          ? json(405, { error: 'invalid_request', error_description: `method ${method} not allowed` })
          : json(404, { error: 'not_found', error_description: `no such endpoint: ${url.pathname}` });
      }
      const request = taken ?? (await readRequest(message, path, `${urls.base}/${prefix}`));
      const routeId = `${prefix} ${route.method} ${path}`;
      requestLog.push(routeId);
      const fault = faults.take(routeId);
      if (fault?.kind === 'truncated') cutShort(response);
      const applied = fault
        ? await applyFault(
            fault,
            PROBLEM_DETAILS_SERVICES.has(prefix) ? `${request.baseUrl}${path}#${randomUUID()}` : undefined,
          )
        : undefined;
      if (applied) return applied;
      const started = process.hrtime.bigint();
      try {
        const answer = await route.handler(request);
        return signing ? quirks.answer(`${route.method} ${request.path}`, answer) : answer;
      } finally {
        const time = serviceTime.get(prefix) ?? { calls: 0, ms: 0 };
        serviceTime.set(prefix, {
          calls: time.calls + 1,
          ms: time.ms + Number(process.hrtime.bigint() - started) / 1e6,
        });
        revocations.served(routeId);
      }
    }
  };
  // Over TLS the certificate is set once the PKI (whose URLs name the port) is loaded.
  const server: Server = options.tls ? createTlsServer({}, listener) : createServer(listener);
  // Idle connections live as long as behind a typical load balancer (60 s and more), not Node's 5 s: a
  // client that reuses one the server just dropped gets ECONNRESET, which a busy test runner met.
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await listen(server, options.port ?? 0);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox: no TCP address');
  const base = `${options.tls ? 'https' : 'http'}://${options.hostName ?? '127.0.0.1'}:${address.port}`;
  const urls: SandboxUrls = {
    base,
    signing: `${base}/signing`,
    signingV2: `${base}/signing-v2`,
    identity: `${base}/identity`,
    identityLegacy: `${base}/identity-legacy`,
    storage: `${base}/storage`,
    tsa: `${base}/tsa`,
    tsaEndpoint: `${base}/tsa/tss03`,
    pki: `${base}/pki`,
    lotl: `${base}/trust/eu-lotl.xml`,
  };

  const closers: CloseFn[] = [];
  let pki: SandboxPki;
  let tls: TlsServerCertificate | undefined;
  try {
    pki = await loadOrCreatePki(options.dataDir, { baseUrl: urls.pki, now: clock.now() });
    if (options.tls) {
      tls = await sandboxTlsCertificate(pki, clock.now(), options.hostName);
      (server as unknown as { setSecureContext(context: { cert: string; key: string }): void }).setSecureContext({
        cert: tls.chainPem,
        key: tls.keyPem,
      });
    }
  } catch (error) {
    await closeServer(server, sockets);
    throw error;
  }
  const state = { autoApprove: options.autoApprove ?? false };
  const revocations = new RevocationSchedule(pki, clock);
  const shared: SharedServices = {};
  const deps: SandboxDeps & StorageHostHooks = {
    faults,
    requestLog,
    pki,
    clock,
    dataDir: options.dataDir,
    urls,
    secrets,
    shared,
    quirks,
    ...(options.log ? { log: options.log } : {}),
    ...(tls ? { tls } : {}),
    ...(options.hostName ? { hostName: options.hostName } : {}),
    ...(options.trustLists ? { trustLists: options.trustLists } : {}),
    get autoApprove() {
      return state.autoApprove;
    },
  };
  try {
    for (const [prefix, mount] of SERVICES) {
      if (prefix === 'storage' && options.s3 === false) continue;
      const router = new Router(prefix);
      routers.set(prefix, router);
      const close = await mount(router, deps);
      if (close) closers.push(close);
    }
  } catch (error) {
    await Promise.allSettled(closers.map((close) => close()));
    await closeServer(server, sockets);
    throw error;
  }

  function control(request: SandboxRequest): SandboxResponse {
    if (request.method === 'POST' && request.path === '/faults') {
      const rule: unknown = JSON.parse(request.body.toString('utf8') || 'null');
      if (!isFaultRule(rule))
        return json(400, { error: 'invalid_request', error_description: 'expected {route, fault, times?}' });
      faults.inject(rule);
      return json(200, { ok: true });
    }
    if (request.method === 'DELETE' && request.path === '/faults') {
      faults.clear();
      clearStorageSwitches(shared);
      return json(200, { ok: true });
    }
    if (request.method === 'POST' && request.path === '/quirks') {
      const names = jsonBody(request)?.['quirks'];
      if (
        !Array.isArray(names) ||
        !names.every((name): name is QuirkName => typeof name === 'string' && isQuirkName(name))
      ) {
        return json(400, {
          error: 'invalid_request',
          error_description: 'expected {quirks: [NAME…]} with known names',
        });
      }
      quirks.set(names);
      return json(200, { quirks: quirks.list() });
    }
    if (request.method === 'POST' && request.path === '/storage') return storageSwitch(shared, jsonBody(request));
    if (request.method === 'POST' && request.path === '/clock') {
      const body = JSON.parse(request.body.toString('utf8') || '{}') as { advanceSeconds?: number; reset?: boolean };
      if (body.reset) clock.reset();
      if (typeof body.advanceSeconds === 'number') clock.advance(body.advanceSeconds * 1000);
      return json(200, { now: clock.now().toISOString() });
    }
    if (request.method === 'POST' && request.path === '/revocations') {
      const rule: unknown = jsonBody(request);
      if (!isRevocationRule(rule))
        return json(400, {
          error: 'invalid_request',
          error_description: 'expected {credentialID, after?: {route, calls}}',
        });
      return revocations.arm(rule)
        ? json(200, { ok: true })
        : json(404, { error: 'not_found', error_description: `no credential ${rule.credentialID}` });
    }
    if (request.method === 'GET' && request.path === '/stats')
      return json(200, { services: Object.fromEntries(serviceTime) });
    if (request.method === 'GET' && request.path === '/health') return json(200, { ok: true, urls });
    return json(404, { error: 'not_found', error_description: 'unknown control endpoint' });
  }

  return {
    urls,
    pki,
    clock,
    faults,
    quirks,
    secrets,
    shared,
    requestLog,
    lotlSignerCertificate: shared.lotlSignerCertificate ?? '',
    revocations,
    serviceTime,
    get autoApprove() {
      return state.autoApprove;
    },
    set autoApprove(value: boolean) {
      state.autoApprove = value;
    },
    async close() {
      await Promise.allSettled(closers.map((close) => close()));
      await closeServer(server, sockets);
    },
  };
}

/** Applies an armed fault; a status fault answers Problem Details at `problemInstance` when given (else an OAuth-style error). */
async function applyFault(fault: Fault, problemInstance?: string): Promise<SandboxResponse | 'reset' | undefined> {
  switch (fault.kind) {
    case 'delay':
      await new Promise((resolve) => setTimeout(resolve, fault.ms));
      return undefined;
    case 'status': {
      const answer: SandboxResponse = problemInstance
        ? problem(
            fault.status,
            STATUS_CODES[fault.status] ?? 'Error',
            `Injected HTTP ${fault.status} (sandbox fault).`,
            problemInstance,
          )
        : {
            status: fault.status,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ error: 'injected_fault', error_description: `injected HTTP ${fault.status}` }),
          };
      return { ...answer, headers: { ...answer.headers, ...fault.headers }, body: fault.body ?? answer.body };
    }
    case 'malformed':
      return {
        status: 200,
        headers: { 'content-type': fault.contentType ?? 'application/json' },
        body: fault.body ?? '{"truncated": ',
      };
    case 'reset':
      return 'reset';
    case 'truncated':
      return undefined;
  }
}

/** The sandbox's TLS server certificate: from its issuing CA (so its root is the CA to trust), for loopback names. */
function sandboxTlsCertificate(
  pki: SandboxPki,
  now: Date,
  hostName: string | undefined,
): Promise<TlsServerCertificate> {
  const day = 24 * 60 * 60 * 1000;
  return issueTlsServerCertificate({
    issuer: pki.issuingCa,
    names: ['localhost', '127.0.0.1', ...(hostName ? [hostName] : [])],
    notBefore: new Date(now.getTime() - day),
    notAfter: new Date(now.getTime() + 365 * day),
  });
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}
