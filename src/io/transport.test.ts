import { afterEach, describe, expect, it } from 'vitest';
import { displayProxy, loadTransport } from './transport.js';

const VARIABLES = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'ALL_PROXY',
  'all_proxy',
  'NO_PROXY',
  'no_proxy',
];
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));

afterEach(() => {
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** A transport from these proxy variables (the libraries read process.env, as curl reads the environment). */
async function transportWith(variables: Record<string, string>) {
  for (const name of VARIABLES) delete process.env[name];
  Object.assign(process.env, variables);
  return loadTransport({}, process.env);
}

const proxyOf = async (transport: Awaited<ReturnType<typeof transportWith>>, url: string) =>
  (await transport.route(new URL(url))).proxy;

describe('which calls go through the proxy', () => {
  it('https through HTTPS_PROXY, http through HTTP_PROXY, loopback never', async () => {
    const transport = await transportWith({
      HTTPS_PROXY: 'http://user:secret@proxy.corp:3128',
      http_proxy: 'proxy.corp:8080',
    });
    expect(await proxyOf(transport, 'https://sign.example/csc/v1/info')).toBe('http://proxy.corp:3128');
    expect(await proxyOf(transport, 'http://ocsp.example/')).toBe('http://proxy.corp:8080');
    for (const url of ['https://127.0.0.1:8443/x', 'https://localhost/x', 'http://[::1]:80/x', 'https://127.9.9.9/x'])
      expect(await proxyOf(transport, url)).toBeUndefined();
  });

  it('NO_PROXY as curl and gh read it: a name covers its subdomains, .name only them, host:port that port, * all', async () => {
    const transport = await transportWith({
      HTTPS_PROXY: 'http://proxy.corp:3128',
      NO_PROXY: 'corp.example, .internal.example,tsa.example:8443',
    });
    expect(await proxyOf(transport, 'https://corp.example/')).toBeUndefined();
    expect(await proxyOf(transport, 'https://sign.corp.example/')).toBeUndefined();
    expect(await proxyOf(transport, 'https://notcorp.example/')).toBe('http://proxy.corp:3128');
    expect(await proxyOf(transport, 'https://a.internal.example/')).toBeUndefined();
    expect(await proxyOf(transport, 'https://tsa.example:8443/')).toBeUndefined();
    expect(await proxyOf(transport, 'https://tsa.example/')).toBe('http://proxy.corp:3128');
    const all = await transportWith({ https_proxy: 'http://proxy.corp:3128', no_proxy: '*' });
    expect(await proxyOf(all, 'https://sign.example/')).toBeUndefined();
  });

  it('without a proxy variable, everything goes direct', async () => {
    const transport = await transportWith({});
    expect(await transport.route(new URL('https://sign.example/'))).toEqual({});
  });

  it('never shows the proxy credentials', () => {
    expect(displayProxy('http://user:s3cret@proxy.corp:3128')).toBe('http://proxy.corp:3128');
    expect(displayProxy('proxy.corp:3128')).toBe('http://proxy.corp:3128');
  });

  it('refuses a proxy variable that is not an http(s) proxy URL, naming it', async () => {
    await expect(transportWith({ HTTPS_PROXY: 'http://proxy.corp:port' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      exitCode: 3,
      message: expect.stringContaining('HTTPS_PROXY'),
    });
    await expect(transportWith({ all_proxy: 'socks5://proxy.corp:1080' })).rejects.toMatchObject({
      exitCode: 3,
      message: expect.stringContaining('all_proxy names a socks5 proxy'),
    });
    await expect(transportWith({ HTTP_PROXY: 'http://user:s3cret@proxy.corp:3128/some/path' })).rejects.toSatisfy(
      (error: Error) => !error.message.includes('s3cret'),
    );
  });
});
