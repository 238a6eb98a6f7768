import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fault } from '../../src/sandbox/faults.js';

/**
 * A fault proxy in front of the sandbox S3 endpoint. The S3 gateway takes the host's faults too;
 * the proxy is for faults at the connection (a delayed answer that closes, a reset) and for the
 * S3 PUT rows of the fault matrix, counted by `puts`.
 */
export interface FaultProxy {
  url: string;
  faults: Fault[];
  puts: number;
  close(): Promise<void>;
}

/** Forwards to the sandbox S3 gateway (Host kept, so SigV4 still verifies); object PUTs take armed faults. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const proxy: FaultProxy = { url: '', faults: [], puts: 0, close: async () => undefined };
  const server: Server = createServer((request, response) => {
    const isPut = request.method === 'PUT';
    if (isPut) proxy.puts++;
    const fault = isPut ? proxy.faults.shift() : undefined;
    const forward = () => {
      const outgoing = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      outgoing.on('error', () => response.destroy());
      request.pipe(outgoing);
    };
    if (!fault) return forward();
    request.resume();
    request.on('end', () => {
      if (fault.kind === 'reset') return request.socket.destroy();
      if (fault.kind === 'delay') return void setTimeout(() => response.destroy(), fault.ms);
      if (fault.kind === 'status') {
        const code = fault.status === 429 ? 'SlowDown' : fault.status === 503 ? 'ServiceUnavailable' : 'InternalError';
        response.writeHead(fault.status, { 'content-type': 'application/xml' });
        return response.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected ${fault.status}</Message></Error>`,
        );
      }
      if (fault.kind === 'truncated') return request.socket.destroy();
      response.writeHead(500, { 'content-type': fault.contentType ?? 'application/xml' });
      response.end(fault.body ?? '<Error><Code>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
