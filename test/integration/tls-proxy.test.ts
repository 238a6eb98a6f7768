/**
 * The transport behind a corporate firewall (issue 32): every emulator over HTTPS (sandbox --tls),
 * the same through an HTTP proxy that alone resolves the sandbox's name, and the TLS, proxy and
 * configuration failures a user meets there, each one line with its exit code and never retried.
 */
import { createPrivateKey } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTlsServerCertificate } from '../../src/sandbox/pki.js';
import { PROXY_VARIABLES, startTestProxy, type ProxyBehaviour, type TestProxy } from '../helpers/connect-proxy.js';
import { pdfLibPdf } from '../helpers/pdf-fixtures.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const DAY = 24 * 60 * 60 * 1000;

let work: { dir: string; remove: () => Promise<void> };

beforeAll(async () => {
  work = await tempDirForFile('esign-tls-');
});

afterAll(async () => {
  await work?.remove();
});

/** The last line of stderr: what a user reads. */
function errorLine(result: CliResult): string {
  return result.stderr.trim().split('\n').at(-1) ?? '';
}

let pdfs = 0;
/** A fresh PDF to sign, and the path to sign it to. */
async function pdfToSign(): Promise<[string, string, string]> {
  const input = await pdfLibPdf(work.dir);
  return [input, '--output', join(work.dir, `signed-${++pdfs}.pdf`)];
}

let files = 0;
/** A new text file (its name made unique, so no earlier .tsr or .p7s is in the way). */
async function textFile(name: string): Promise<string> {
  const path = join(work.dir, `${++files}-${name}`);
  await writeFile(path, `release notes for ${name}\n`);
  return path;
}

describe('over HTTPS: esign sandbox start --tls', () => {
  let t: TestSandbox;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    t = await startTestSandbox({ tls: true, s3: true });
    env = { ...t.env, ...PROXY_VARIABLES };
  });
  afterAll(async () => t?.close());

  it('serves every emulator at https:// URLs, S3 included', () => {
    for (const url of Object.values(t.sandbox.urls)) expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+/);
  });

  it('signs a PDF and a detached .p7s at B-T, every call over TLS', async () => {
    const signedPdf = await runCli(
      ['--auto-approve', '--verbose', '--json', 'sign', '--level', 'B-T', ...(await pdfToSign())],
      { env },
    );
    expect(signedPdf.code, signedPdf.stderr).toBe(0);
    const calls = signedPdf.stderr.split('\n').filter((line) => / → \d{3} /.test(line));
    expect(calls.length).toBeGreaterThan(2);
    for (const call of calls) expect(call).toContain('https://127.0.0.1:');
    const text = await textFile('notes.txt');
    const signedText = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-T', text], { env });
    expect(signedText.code, signedText.stderr).toBe(0);
    expect(signedText.json<{ output: string }>().output).toMatch(/\.p7s$/);
    const verified = await runCli(['--json', 'verify', '--signature', `${text}.p7s`, text], { env });
    expect(verified.code, verified.stdout).toBe(0);
  });

  it('lists credentials, logs in and uploads over TLS', async () => {
    const list = await runCli(['--auto-approve', '--json', 'credentials', 'list'], { env });
    expect(list.code, list.stderr).toBe(0);
    const login = await runCli(['--auto-approve', 'login', '--scope', 'com.vendor.storage'], { env });
    expect(login.code, login.stderr).toBe(0);
    const upload = await runCli(['--json', 'upload', await textFile('upload.txt')], { env });
    expect(upload.code, upload.stderr).toBe(0);
  });

  it('collects revocation data over TLS (sign B-LT, verify --level B-LT)', async () => {
    const signed = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-LT', ...(await pdfToSign())], {
      env,
    });
    expect(signed.code, signed.stderr).toBe(0);
    const verified = await runCli(['--json', 'verify', '--level', 'B-LT', signed.json<{ output: string }>().output], {
      env,
    });
    expect(verified.code, verified.stdout).toBe(0);
  });
});

describe('through an HTTP proxy that alone resolves the service name', () => {
  const NAME = 'sandbox.esign.test';
  let t: TestSandbox;

  beforeAll(async () => {
    t = await startTestSandbox({ tls: true, s3: true, hostName: NAME });
  });
  afterAll(async () => t?.close());

  async function withProxy<T>(
    behaviour: ProxyBehaviour,
    run: (proxy: TestProxy) => Promise<T>,
    credentials?: string,
  ): Promise<T> {
    const proxy = await startTestProxy({ names: [NAME], behaviour, ...(credentials ? { credentials } : {}) });
    try {
      return await run(proxy);
    } finally {
      await proxy.close();
    }
  }

  it('signs, logs in and uploads with every call tunnelled (CONNECT), proxy credentials used and never printed', async () => {
    await withProxy(
      'tunnel',
      async (proxy) => {
        const withCredentials = proxy.url.replace('http://', 'http://corp-user:proxy-pass-7x@');
        const env = { ...t.env, ...PROXY_VARIABLES, https_proxy: withCredentials };
        const signed = await runCli(['--auto-approve', '--verbose', 'sign', '--level', 'B-T', ...(await pdfToSign())], {
          env,
        });
        expect(signed.code, signed.stderr).toBe(0);
        const login = await runCli(['--auto-approve', 'login', '--scope', 'com.vendor.storage'], { env });
        expect(login.code, login.stderr).toBe(0);
        const upload = await runCli(['--verbose', 'upload', await textFile('proxied.txt')], { env });
        expect(upload.code, upload.stderr).toBe(0);
        for (const result of [signed, login, upload])
          expect(result.stdout + result.stderr).not.toContain('proxy-pass-7x');
        expect(signed.stderr).toContain(`via ${proxy.url}`);
        const targets = new Set(proxy.connects.map((c) => c.target));
        expect(targets).toContain(new URL(t.sandbox.urls.base).host);
        expect(targets).toContain(new URL(t.sandbox.urls.s3 ?? '').host);
        for (const connect of proxy.connects)
          expect(connect.authorization).toBe(`Basic ${Buffer.from('corp-user:proxy-pass-7x').toString('base64')}`);
      },
      'corp-user:proxy-pass-7x',
    );
  });

  /** A timestamp from the sandbox TSA by its proxy-only name, on the env profile (no sandbox to fall back to). */
  function timestamp(proxyVariables: Record<string, string>, file: string): Promise<CliResult> {
    const env = {
      ESIGN_CONFIG_DIR: t.configDir,
      ...PROXY_VARIABLES,
      ...proxyVariables,
      ESIGN_TSA_URL: t.sandbox.urls.tsaEndpoint,
      ESIGN_TSA_USERNAME: 'esign',
      ESIGN_TSA_PASSWORD: t.sandbox.secrets.tsaPassword,
      ESIGN_TRUST_ANCHORS: t.rootPemPath,
      ESIGN_CA_FILE: t.rootPemPath,
    };
    return runCli(['timestamp', file], { env });
  }

  it('goes direct for a NO_PROXY parent domain (curl convention), so the name does not resolve', async () => {
    await withProxy('tunnel', async (proxy) => {
      const tunnelled = await timestamp({ HTTPS_PROXY: proxy.url }, await textFile('via-proxy.txt'));
      expect(tunnelled.code, tunnelled.stderr).toBe(0);
      expect(proxy.connects).toHaveLength(1);
      proxy.connects.length = 0;
      const result = await timestamp(
        { HTTPS_PROXY: proxy.url, NO_PROXY: 'example.org,esign.test' },
        await textFile('no-proxy.txt'),
      );
      expect(result.code).toBe(5);
      expect(proxy.connects).toEqual([]);
      expect(errorLine(result)).toContain(NAME);
    });
  });

  const failures: Array<[string, ProxyBehaviour | 'refused', RegExp]> = [
    [
      'a proxy that refuses connections',
      'refused',
      /Could not reach the proxy at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    ],
    [
      'a 407 without credentials',
      'require-auth',
      /The proxy at http:\/\/127\.0\.0\.1:\d+ asks for credentials \(HTTP 407\)/,
    ],
    [
      'a captive portal page instead of a tunnel',
      'portal',
      /The proxy at http:\/\/127\.0\.0\.1:\d+ answered the tunnel to sandbox\.esign\.test:\d+ with an HTML page \(HTTP 302\) instead of opening it; nothing was sent/,
    ],
    ['a proxy that closes the tunnel', 'close-tunnel', /through the proxy at http:\/\/127\.0\.0\.1:\d+ was closed/],
  ];
  for (const [name, behaviour, message] of failures) {
    it(`fault matrix: ${name} is one line, exit 5, no secret sent`, async () => {
      await withProxy(behaviour === 'refused' ? 'tunnel' : behaviour, async (proxy) => {
        const url = behaviour === 'refused' ? 'http://127.0.0.1:9' : proxy.url;
        const result = await timestamp({ HTTPS_PROXY: url }, await textFile('proxy-fault.txt'));
        expect(result.code, result.stderr).toBe(5);
        expect(errorLine(result)).toMatch(message);
        expect(result.stderr).not.toMatch(/\n\s+at /);
        expect(proxy.leaked).toBe(0);
        // Refusals by the proxy are not retried; a closed tunnel is a lost connection, tried again.
        if (behaviour === 'require-auth' || behaviour === 'portal') expect(proxy.connects).toHaveLength(1);
      });
    });
  }
});

describe('TLS failures and TLS settings, against a server with a certificate of our choosing', () => {
  let t: TestSandbox;
  let handshakes = 0;

  beforeAll(async () => {
    t = await startTestSandbox({ s3: false });
  });
  afterAll(async () => t?.close());

  /** An HTTPS front for the (plain http) sandbox TSA with the given TLS options; counts handshakes. */
  async function tsaFront(tls: ServerOptions, run: (url: string) => Promise<void>): Promise<void> {
    handshakes = 0;
    const target = new URL(t.sandbox.urls.tsaEndpoint);
    const server: Server = createServer(tls, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void fetch(target, {
          method: 'POST',
          headers: {
            'content-type': request.headers['content-type'] ?? '',
            authorization: request.headers.authorization ?? '',
          },
          body: Buffer.concat(chunks),
        }).then(async (answer) => {
          response.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/octet-stream',
          });
          response.end(Buffer.from(await answer.arrayBuffer()));
        });
      });
    });
    server.on('connection', () => handshakes++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await run(`https://127.0.0.1:${(server.address() as AddressInfo).port}/tsa/tss03`);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  function timestampEnv(tsaUrl: string, extra: Record<string, string> = {}): Record<string, string | undefined> {
    return {
      ESIGN_CONFIG_DIR: t.configDir,
      ESIGN_SANDBOX_DIR: t.dataDir,
      ...PROXY_VARIABLES,
      ESIGN_TSA_URL: tsaUrl,
      ESIGN_TSA_USERNAME: 'esign',
      ESIGN_TSA_PASSWORD: t.sandbox.secrets.tsaPassword,
      ESIGN_TRUST_ANCHORS: t.rootPemPath,
      ...extra,
    };
  }

  async function certificate(options: { names?: string[]; expired?: boolean; selfSigned?: boolean }) {
    const now = Date.now();
    return issueTlsServerCertificate({
      ...(options.selfSigned ? {} : { issuer: t.sandbox.pki.issuingCa }),
      names: options.names ?? ['localhost', '127.0.0.1'],
      notBefore: new Date(now - (options.expired ? 30 : 1) * DAY),
      notAfter: new Date(now + (options.expired ? -1 : 30) * DAY),
    });
  }

  const rows: Array<[string, Parameters<typeof certificate>[0], boolean, RegExp, RegExp]> = [
    [
      'unknown issuer (no caFile)',
      {},
      false,
      /failed: the server certificate was issued by an unknown certificate authority/,
      /set ESIGN_CA_FILE/,
    ],
    ['expired server certificate', { expired: true }, true, /failed: the server certificate has expired/, /clock/],
    [
      'wrong host name',
      { names: ['tsa.other.example'] },
      true,
      /failed: the server certificate is not for 127\.0\.0\.1 \(it names DNS:tsa\.other\.example\)/,
      /host name the certificate names/,
    ],
    [
      'self-signed server certificate',
      { selfSigned: true },
      true,
      /failed: the server certificate is self-signed/,
      /set ESIGN_CA_FILE/,
    ],
  ];
  for (const [name, options, trustRoot, message, hint] of rows) {
    it(`fault matrix: ${name} is one line naming the host, exit 5, tried once`, async () => {
      const pem = await certificate(options);
      await tsaFront({ cert: pem.chainPem, key: pem.keyPem }, async (url) => {
        const file = await textFile('ts.txt');
        const result = await runCli(['timestamp', file], {
          env: timestampEnv(url, trustRoot ? { ESIGN_CA_FILE: t.rootPemPath } : {}),
        });
        expect(result.code, result.stderr).toBe(5);
        const lines = result.stderr.trim().split('\n');
        expect(lines.join('\n')).toMatch(
          new RegExp(`TLS to the timestamp authority at 127\\.0\\.0\\.1:\\d+ ${message.source}`),
        );
        expect(result.stderr).toMatch(hint);
        expect(result.stderr).not.toMatch(/\n\s+at /);
        expect(handshakes).toBe(1);
      });
    });
  }

  it('trusts ESIGN_CA_FILE in addition to the system roots, and NODE_EXTRA_CA_CERTS as Node does', async () => {
    const pem = await certificate({});
    await tsaFront({ cert: pem.chainPem, key: pem.keyPem }, async (url) => {
      for (const extra of [{ ESIGN_CA_FILE: t.rootPemPath }, { NODE_EXTRA_CA_CERTS: t.rootPemPath }] as Array<
        Record<string, string>
      >) {
        const result = await runCli(['timestamp', await textFile('trusted.txt'), '--force'], {
          env: timestampEnv(url, extra),
        });
        expect(result.code, result.stderr).toBe(0);
      }
    });
  });

  it('shows the client certificate (encrypted key, passphrase from ESIGN_CLIENT_KEY_PASSPHRASE) to a server that requires one', async () => {
    const server = await certificate({});
    const client = await certificate({ names: ['esign-client.example'] });
    const passphrase = 'client-key-passphrase-93';
    const encryptedKey = createPrivateKey(client.keyPem).export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase,
    }) as string;
    const certPath = join(work.dir, 'client.crt.pem');
    const keyPath = join(work.dir, 'client.key.pem');
    await writeFile(certPath, client.chainPem);
    await writeFile(keyPath, encryptedKey, { mode: 0o600 });
    const root = await readFile(t.rootPemPath, 'utf8');
    await tsaFront(
      { cert: server.chainPem, key: server.keyPem, requestCert: true, rejectUnauthorized: true, ca: root },
      async (url) => {
        const base = timestampEnv(url, { ESIGN_CA_FILE: t.rootPemPath });
        const without = await runCli(['timestamp', await textFile('mtls.txt')], { env: base });
        expect(without.code, without.stderr).toBe(5);
        expect(errorLine(without) + without.stderr).toMatch(/ESIGN_CLIENT_CERT and ESIGN_CLIENT_KEY/);
        const withCertificate = await runCli(['timestamp', await textFile('mtls2.txt')], {
          env: {
            ...base,
            ESIGN_CLIENT_CERT: certPath,
            ESIGN_CLIENT_KEY: keyPath,
            ESIGN_CLIENT_KEY_PASSPHRASE: passphrase,
          },
        });
        expect(withCertificate.code, withCertificate.stderr).toBe(0);
        expect(withCertificate.stdout + withCertificate.stderr).not.toContain(passphrase);
        const wrongPassphrase = await runCli(['timestamp', await textFile('mtls3.txt')], {
          env: {
            ...base,
            ESIGN_CLIENT_CERT: certPath,
            ESIGN_CLIENT_KEY: keyPath,
            ESIGN_CLIENT_KEY_PASSPHRASE: 'wrong',
          },
        });
        expect(wrongPassphrase.code).toBe(3);
        expect(errorLine(wrongPassphrase) + wrongPassphrase.stderr).toMatch(
          /ESIGN_CLIENT_KEY names an encrypted key that ESIGN_CLIENT_KEY_PASSPHRASE does not open/,
        );
      },
    );
  });

  const badInputs: Array<[string, Record<string, string>, RegExp]> = [
    ['a malformed proxy URL', { HTTPS_PROXY: 'http://proxy.corp:notaport' }, /HTTPS_PROXY is not a proxy URL/],
    ['a socks proxy', { ALL_PROXY: 'socks5://127.0.0.1:1080' }, /ALL_PROXY names a socks5 proxy/],
    [
      'ESIGN_CA_FILE that is not a PEM bundle',
      { ESIGN_CA_FILE: '/etc/hostname' },
      /ESIGN_CA_FILE names \/etc\/hostname, which is not a PEM bundle of certificates/,
    ],
    [
      'a client certificate without its key',
      { ESIGN_CLIENT_CERT: '/etc/hostname' },
      /ESIGN_CLIENT_CERT is set but ESIGN_CLIENT_KEY is not/,
    ],
    [
      'a client key without its certificate',
      { ESIGN_CLIENT_KEY: '/etc/hostname' },
      /ESIGN_CLIENT_KEY is set but ESIGN_CLIENT_CERT is not/,
    ],
  ];
  for (const [name, extra, message] of badInputs) {
    it(`bad input: ${name} is exit 3 naming the variable, before any request`, async () => {
      const pem = await certificate({});
      await tsaFront({ cert: pem.chainPem, key: pem.keyPem }, async (url) => {
        const result = await runCli(['timestamp', await textFile('bad.txt')], { env: timestampEnv(url, extra) });
        expect(result.code, result.stderr).toBe(3);
        expect(result.stderr).toMatch(message);
        expect(handshakes).toBe(0);
      });
    });
  }
});
