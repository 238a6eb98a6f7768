/**
 * How every outbound call reaches its server, decided once per run and passed where clients are
 * built (the HttpClient and the S3 client): the proxy from HTTPS_PROXY / HTTP_PROXY / NO_PROXY, the
 * roots trusted beside Node's own (caFile), and the TLS client certificate. The proxy libraries load
 * only when a proxy variable is set, so a run without one pays nothing for them.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Agent, ClientRequest } from 'node:http';
import type { AgentConnectOpts } from 'agent-base';
import { isIP } from 'node:net';
import { EsignError } from '../core/errors.js';

/** TLS options given to every https request (and to the S3 client's agent). */
export interface TlsOptions {
  /** Node's roots, NODE_EXTRA_CA_CERTS and caFile; absent without caFile (Node's defaults then apply). */
  ca?: string[];
  cert?: string;
  key?: string;
  passphrase?: string;
}

export interface TransportSettings {
  caFile?: string;
  clientCert?: string;
  clientKey?: string;
}

/** Where each transport setting came from, for messages that name what to change. */
export type SettingNames = Record<keyof TransportSettings, string>;

export const TRANSPORT_SETTING_NAMES: SettingNames = {
  caFile: 'ESIGN_CA_FILE',
  clientCert: 'ESIGN_CLIENT_CERT',
  clientKey: 'ESIGN_CLIENT_KEY',
};
export const CLIENT_KEY_PASSPHRASE_VARIABLE = 'ESIGN_CLIENT_KEY_PASSPHRASE';

/** The proxy variables curl, gh and the AWS CLI honour, in either case. */
const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'] as const;

/** How a request reaches its server: the agent (a proxy's, or none for Node's own) and the proxy's address. */
export interface Route {
  agent?: Agent;
  /** The proxy, without credentials, for messages; absent for a direct connection. */
  proxy?: string;
}

export class Transport {
  private readonly agents = new Map<string, Promise<Agent>>();

  constructor(
    readonly tls: TlsOptions,
    /** Whether any proxy variable is set; without one, no proxy code loads. */
    private readonly proxied: boolean,
    /** The setting that adds a root, for TLS failure hints (caFile's variable or key). */
    readonly caSettingName: string = TRANSPORT_SETTING_NAMES.caFile,
  ) {}

  /** A transport with Node's defaults and no proxy. */
  static direct(): Transport {
    return new Transport({}, false);
  }

  /** The proxy for a URL (loopback never; NO_PROXY honoured), or a direct route. */
  async route(url: URL): Promise<Route> {
    if (!this.proxied || isLoopbackHost(url.hostname)) return {};
    const proxy = await proxyFor(url);
    if (!proxy) return {};
    const key = `${url.protocol} ${proxy}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = proxyAgent(url.protocol, withScheme(proxy, url.protocol), this.tls);
      this.agents.set(key, agent);
    }
    return { agent: await agent, proxy: displayProxy(proxy, url.protocol) };
  }

  /** An agent for an SDK that takes one agent per scheme (the S3 client), carrying the TLS options. */
  async agentFor(url: URL): Promise<Agent | undefined> {
    const { agent } = await this.route(url);
    if (agent) return agent;
    if (url.protocol !== 'https:' || Object.keys(this.tls).length === 0) return undefined;
    const { Agent: HttpsAgent } = await import('node:https');
    return new HttpsAgent({ keepAlive: true, maxSockets: 50, ...this.tls });
  }
}

/**
 * The proxy for a URL as proxy-from-env reads the variables. Its NO_PROXY match is exact unless an
 * entry starts with a dot; curl and gh let `example.com` cover its subdomains too, so the library is
 * also asked about each parent name: a parent that it would not proxy exempts the host.
 */
async function proxyFor(url: URL): Promise<string> {
  const { getProxyForUrl } = await import('proxy-from-env');
  const proxy = getProxyForUrl(url);
  if (!proxy || isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) return proxy;
  const labels = url.hostname.split('.');
  for (let i = 1; i < labels.length; i++) {
    const parent = new URL(url.href);
    parent.hostname = labels.slice(i).join('.');
    if (!getProxyForUrl(parent)) return '';
  }
  return proxy;
}

async function proxyAgent(protocol: string, proxy: string, tls: TlsOptions): Promise<Agent> {
  // A plain http:// target (OCSP, CRL, CA certificates) goes to the proxy as an absolute URL, as
  // curl does; an https:// target always through a CONNECT tunnel, whatever the proxy's own scheme.
  if (protocol === 'http:') {
    const { HttpProxyAgent } = await import('http-proxy-agent');
    return new HttpProxyAgent(proxy, { keepAlive: true });
  }
  const { HttpsProxyAgent } = await import('https-proxy-agent');
  // The agent keeps TLS options only for its connection to the proxy; those of a request reach the
  // tunnelled connection, so a client that sets none on its requests (the S3 SDK) gets ours here.
  class TunnelAgent extends HttpsProxyAgent<string> {
    override connect(request: ClientRequest, options: AgentConnectOpts) {
      return super.connect(request, { ...tls, ...options });
    }
  }
  return new TunnelAgent(proxy, { keepAlive: true, ...tls });
}

function withScheme(proxy: string, protocol: string): string {
  return proxy.includes('://') ? proxy : `${protocol}//${proxy}`;
}

/** The proxy's scheme, host and port: its credentials are never shown. */
export function displayProxy(proxy: string, protocol = 'http:'): string {
  try {
    const url = new URL(withScheme(proxy, protocol));
    return `${url.protocol}//${url.host}`;
  } catch {
    return '(invalid proxy URL)';
  }
}

const LOOPBACK_HOSTS = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.test(hostname);
}

/**
 * Reads and checks everything the transport needs before any request: the proxy variables are
 * URLs, caFile is a PEM bundle of certificates, the client certificate comes with its key (and the
 * key opens with ESIGN_CLIENT_KEY_PASSPHRASE). A fault is exit 3 naming the variable or setting.
 */
export async function loadTransport(
  settings: TransportSettings,
  env: NodeJS.ProcessEnv,
  names: SettingNames = TRANSPORT_SETTING_NAMES,
): Promise<Transport> {
  const proxied = checkProxyVariables(env);
  const tls: TlsOptions = {};
  if (settings.caFile) tls.ca = await trustedRoots(settings.caFile, names.caFile, env);
  if (settings.clientCert || settings.clientKey)
    Object.assign(tls, await clientCertificate(settings, names, env[CLIENT_KEY_PASSPHRASE_VARIABLE] || undefined));
  return new Transport(tls, proxied, names.caFile);
}

function checkProxyVariables(env: NodeJS.ProcessEnv): boolean {
  let proxied = false;
  for (const variable of PROXY_VARIABLES) {
    const value = env[variable];
    if (!value) continue;
    proxied = true;
    let url: URL | undefined;
    try {
      url = new URL(withScheme(value, 'http:'));
    } catch {
      url = undefined;
    }
    if (!url || !url.hostname || (url.pathname !== '/' && url.pathname !== '')) {
      throw new EsignError('CONFIG_INVALID', `${variable} is not a proxy URL (${displayProxy(value)}).`, {
        hint: `Set ${variable} to http://HOST:PORT (credentials as http://USER:PASSWORD@HOST:PORT), or unset it.`,
      });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new EsignError(
        'CONFIG_INVALID',
        `${variable} names a ${url.protocol.replace(/:$/, '')} proxy; esign supports http and https proxies.`,
        {
          hint: `Set ${variable} to the proxy's http://HOST:PORT, or unset it.`,
        },
      );
    }
  }
  return proxied;
}

async function readSettingFile(path: string, name: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new EsignError(
      'CONFIG_INVALID',
      `${capitalized(name)} names ${path}, which cannot be read (${(error as { code?: string }).code ?? 'error'}).`,
      {
        hint: `Point ${name} at ${what}.`,
        cause: error,
      },
    );
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** Certificates of a PEM bundle; none, or one that does not parse, is a configuration error naming the setting. */
function pemCertificates(text: string, path: string, name: string): string[] {
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  const notPem = () =>
    new EsignError('CONFIG_INVALID', `${capitalized(name)} names ${path}, which is not a PEM bundle of certificates.`, {
      hint: `Point ${name} at a file of -----BEGIN CERTIFICATE----- blocks (convert DER with \`openssl x509 -inform der -in FILE -out FILE.pem\`).`,
    });
  if (blocks.length === 0) throw notPem();
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw Object.assign(notPem(), { cause: error });
    }
  }
  return blocks;
}

/** Node's roots, those of NODE_EXTRA_CA_CERTS (which an explicit `ca` would otherwise drop), and caFile's. */
async function trustedRoots(caFile: string, name: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const extra = pemCertificates(
    await readSettingFile(caFile, name, 'a PEM bundle of the certificates to trust'),
    caFile,
    name,
  );
  const { rootCertificates } = await import('node:tls');
  const nodeExtra = env['NODE_EXTRA_CA_CERTS'];
  const fromNode = nodeExtra ? ((await readFile(nodeExtra, 'utf8').catch(() => '')).match(PEM_CERTIFICATE) ?? []) : [];
  return [...rootCertificates, ...fromNode, ...extra];
}

async function clientCertificate(
  settings: TransportSettings,
  names: SettingNames,
  passphrase: string | undefined,
): Promise<TlsOptions> {
  if (!settings.clientCert || !settings.clientKey) {
    const [given, missing] = settings.clientCert
      ? [names.clientCert, names.clientKey]
      : [names.clientKey, names.clientCert];
    throw new EsignError(
      'CONFIG_INVALID',
      `${capitalized(given)} is set but ${missing} is not: a TLS client certificate needs both.`,
      {
        hint: `Set ${names.clientCert} (the certificate, PEM) and ${names.clientKey} (its private key, PEM), or unset both.`,
      },
    );
  }
  const certText = await readSettingFile(settings.clientCert, names.clientCert, 'the client certificate (PEM)');
  const [cert] = pemCertificates(certText, settings.clientCert, names.clientCert);
  const keyText = await readSettingFile(
    settings.clientKey,
    names.clientKey,
    'the private key of the client certificate (PEM)',
  );
  let key;
  try {
    key = createPrivateKey({ key: keyText, format: 'pem', ...(passphrase ? { passphrase } : {}) });
  } catch (error) {
    const encrypted = /ENCRYPTED/.test(keyText);
    throw new EsignError(
      'CONFIG_INVALID',
      encrypted
        ? `${capitalized(names.clientKey)} names an encrypted key that ${passphrase ? `${CLIENT_KEY_PASSPHRASE_VARIABLE} does not open` : `needs ${CLIENT_KEY_PASSPHRASE_VARIABLE}`}.`
        : `${capitalized(names.clientKey)} names ${settings.clientKey}, which is not a PEM private key.`,
      {
        hint: encrypted
          ? `Set ${CLIENT_KEY_PASSPHRASE_VARIABLE} to the key's passphrase.`
          : `Point ${names.clientKey} at the certificate's private key (PEM).`,
        cause: error,
      },
    );
  }
  if (!new X509Certificate(cert!).checkPrivateKey(key)) {
    throw new EsignError(
      'CONFIG_INVALID',
      `${capitalized(names.clientKey)} is not the private key of the certificate in ${names.clientCert}.`,
      {
        hint: `Set ${names.clientCert} and ${names.clientKey} to a matching certificate and key.`,
      },
    );
  }
  return { cert: certText, key: keyText, ...(passphrase ? { passphrase } : {}) };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
