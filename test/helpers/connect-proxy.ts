import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/**
 * An HTTP proxy for the proxy rows of the fault matrix: it tunnels CONNECT to 127.0.0.1 for the
 * names it alone resolves, or misbehaves as told (asks for credentials, answers with a captive
 * portal's page, closes the tunnel once opened). It records every CONNECT and every byte a client
 * sent it beyond a CONNECT it refused (which must be none).
 */
export type ProxyBehaviour = 'tunnel' | 'require-auth' | 'portal' | 'close-tunnel';

export interface TestProxy {
  url: string;
  behaviour: ProxyBehaviour;
  /** `CONNECT host:port` targets, in order, with the Proxy-Authorization header when sent. */
  connects: Array<{ target: string; authorization?: string }>;
  /** Bytes received on sockets whose CONNECT was refused, after the CONNECT itself. */
  leaked: number;
  close(): Promise<void>;
}

export async function startTestProxy(options: {
  names: string[];
  behaviour?: ProxyBehaviour;
  credentials?: string;
}): Promise<TestProxy> {
  const sockets = new Set<Socket>();
  const proxy: TestProxy = {
    url: '',
    behaviour: options.behaviour ?? 'tunnel',
    connects: [],
    leaked: 0,
    close: async () => undefined,
  };
  const server: Server = createServer((_request, response) => {
    response.writeHead(405).end();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    const target = request.url ?? '';
    const authorization = request.headers['proxy-authorization'];
    proxy.connects.push({ target, ...(authorization ? { authorization } : {}) });
    const refuse = (answer: string) => {
      proxy.leaked += head.length;
      client.on('data', (chunk: Buffer) => (proxy.leaked += chunk.length));
      client.end(answer);
    };
    const [host = '', port = ''] = target.split(/:(?=\d+$)/);
    const expected = options.credentials ? `Basic ${Buffer.from(options.credentials).toString('base64')}` : undefined;
    if (proxy.behaviour === 'require-auth' || (expected && authorization !== expected)) {
      return refuse(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n',
      );
    }
    if (proxy.behaviour === 'portal') {
      const page = '<html><body>Sign in to the guest network</body></html>';
      return refuse(
        `HTTP/1.1 302 Found\r\nLocation: http://portal.invalid/\r\nContent-Type: text/html\r\nContent-Length: ${page.length}\r\n\r\n${page}`,
      );
    }
    if (!options.names.includes(host)) return refuse('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
    if (proxy.behaviour === 'close-tunnel') {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      client.once('data', () => client.destroy());
      return;
    }
    const upstream = connect(Number(port), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}

/** Every proxy variable unset: a test's environment starts from no proxy, whatever the machine has. */
export const PROXY_VARIABLES = {
  HTTPS_PROXY: undefined,
  https_proxy: undefined,
  HTTP_PROXY: undefined,
  http_proxy: undefined,
  ALL_PROXY: undefined,
  all_proxy: undefined,
  NO_PROXY: undefined,
  no_proxy: undefined,
};
