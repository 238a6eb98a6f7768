/**
 * HTTP routes of the sandbox timestamping service under `/tsa` (seed part B): `POST /tss03`.
 * HTTP errors come before the body is read and carry no TimeStampResp: 401 for missing or wrong
 * Basic credentials, 400 for a wrong Content-Type or an empty body. Everything else is HTTP 200
 * with a TimeStampResp whose PKIStatus says what happened.
 *
 * Test control (not part of the seed's interface): `POST /_faults` with
 * `{"failInfo": "timeNotAvailable" | "systemFailure", "times"?: n}` makes the next n valid requests
 * fail that way, `{"tamper": "signature" | "imprint" | "nonce", "times"?: n}` spoils the next n
 * tokens (signed by another key, another imprint, another nonce); `POST /_faults/clear` clears
 * them. HTTP 500 comes from the host's generic faults
 * (route `tsa POST /tss03`).
 */
import { join } from 'node:path';
import type { SandboxDeps } from '../deps.js';
import { basicCredentials, json, jsonBody } from '../http.js';
import type { Router, SandboxRequest, SandboxResponse } from '../http.js';
import { FileSerialNumbers } from './serials.js';
import { SandboxTsa } from './tsa.js';
import { TSA_TAMPERS, type InjectableTsaFailure, type TsaTamper } from './tsa.js';

export const TIMESTAMP_QUERY = 'application/timestamp-query';
export const TIMESTAMP_REPLY = 'application/timestamp-reply';
const INJECTABLE: readonly string[] = ['timeNotAvailable', 'systemFailure'] satisfies InjectableTsaFailure[];

export function mountTsa(router: Router, deps: SandboxDeps): void {
  const tsa = new SandboxTsa({
    certificate: deps.pki.tsa.certificate,
    privateKey: deps.pki.tsa.privateKey,
    clock: deps.clock,
    serials: new FileSerialNumbers(join(deps.dataDir, 'tsa', 'serial')),
  });

  router.post('/tss03', (request) => {
    const credentials = basicCredentials(request);
    if (
      !credentials ||
      credentials.user !== deps.secrets.tsaUser ||
      credentials.password !== deps.secrets.tsaPassword
    ) {
      return text(401, 'Authorization header absent or credentials invalid.', {
        'www-authenticate': 'Basic realm="tsa", charset="UTF-8"',
      });
    }
    if (mediaType(request) !== TIMESTAMP_QUERY) return text(400, `Content-Type must be ${TIMESTAMP_QUERY}.`);
    if (request.body.length === 0) return text(400, 'The request body is empty.');
    return {
      status: 200,
      headers: { 'content-type': TIMESTAMP_REPLY },
      body: tsa.respond(new Uint8Array(request.body)),
    };
  });

  router.post('/_faults', (request) => {
    const body = jsonBody(request);
    const failInfo = body?.['failInfo'];
    const tamper = body?.['tamper'];
    const times = body?.['times'] ?? 1;
    const failure =
      typeof failInfo === 'string' && INJECTABLE.includes(failInfo)
        ? (failInfo as InjectableTsaFailure)
        : typeof tamper === 'string' && (TSA_TAMPERS as string[]).includes(tamper)
          ? (tamper as TsaTamper)
          : undefined;
    if (failure === undefined || typeof times !== 'number' || times < 1) {
      return json(400, {
        error: 'invalid_request',
        error_description: `expected {"failInfo": ${INJECTABLE.join(' | ')}} or {"tamper": ${TSA_TAMPERS.join(' | ')}}, with "times"?: n`,
      });
    }
    tsa.injectFailure(failure, times);
    return json(200, { ok: true });
  });

  router.post('/_faults/clear', () => {
    tsa.clearFailures();
    return json(200, { ok: true });
  });
}

function mediaType(request: SandboxRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function text(status: number, message: string, headers: Record<string, string> = {}): SandboxResponse {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers }, body: `${message}\n` };
}
