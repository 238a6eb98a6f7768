/**
 * The sandbox timestamping service (seed part B): turns a DER TimeStampReq into a DER
 * TimeStampResp, applying every rule of the interface, strictly. HTTP concerns (auth, content type)
 * live in routes.ts; time and serial numbers are injected.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readCertificate } from '../../core/cms/certificate.js';
import { OID } from '../../core/cms/oids.js';
import type { Clock } from '../../core/ports.js';
import { TSA_POLICY, parseTimeStampReq } from '../../core/tsp/request.js';
import type { ParsedTimeStampReq } from '../../core/tsp/request.js';
import { PKIStatus } from '../../core/tsp/status.js';
import type { FailureInfoName } from '../../core/tsp/status.js';
import { buildTimeStampResp, buildTimeStampToken } from '../../core/tsp/token.js';
import { buildTstInfo } from '../../core/tsp/tst-info.js';

/** Hands out serial numbers that are never reused, also across restarts. */
export interface SerialNumberSource {
  next(): bigint;
}

/** Failures a test can make the service answer with, in place of a token. */
export type InjectableTsaFailure = Extract<FailureInfoName, 'timeNotAvailable' | 'systemFailure'>;

/** Granted tokens a test can make the service spoil, so that the client must catch them. */
export type TsaTamper = 'signature' | 'imprint' | 'nonce';
export const TSA_TAMPERS: readonly TsaTamper[] = ['signature', 'imprint', 'nonce'];

export interface SandboxTsaOptions {
  /** DER of the TSA certificate (critical EKU timeStamping). */
  certificate: Uint8Array;
  privateKey: KeyObject;
  clock: Clock;
  serials: SerialNumberSource;
  /** Accuracy of genTime in seconds; default 1. */
  accuracySeconds?: number;
}

/** SHA-256 as the service's TSA accepts, and SHA-384 and SHA-512 for the imprints of signatures over those digests. */
const ACCEPTED_HASHES: ReadonlyArray<{ oid: string; name: string; length: number }> = [
  { oid: OID.sha256, name: 'SHA-256', length: 32 },
  { oid: OID.sha384, name: 'SHA-384', length: 48 },
  { oid: OID.sha512, name: 'SHA-512', length: 64 },
];

const FAILURE_STATUS_TEXT: Readonly<Record<InjectableTsaFailure, string>> = {
  timeNotAvailable: 'The trusted time source is temporarily unavailable; retry later.',
  systemFailure: 'Unexpected internal error.',
};

export class SandboxTsa {
  private readonly tsaName: Uint8Array;
  private readonly injected: (InjectableTsaFailure | TsaTamper)[] = [];
  private wrongKey: KeyObject | undefined;

  constructor(private readonly options: SandboxTsaOptions) {
    this.tsaName = readCertificate(options.certificate).subject;
  }

  /** Makes the next `times` otherwise valid requests fail with `failure`, or get a spoiled token. */
  injectFailure(failure: InjectableTsaFailure | TsaTamper, times = 1): void {
    for (let i = 0; i < times; i++) this.injected.push(failure);
  }

  clearFailures(): void {
    this.injected.length = 0;
  }

  /** Answers a DER TimeStampReq with a DER TimeStampResp (never throws). */
  respond(requestDer: Uint8Array): Uint8Array {
    try {
      let request: ParsedTimeStampReq;
      try {
        request = parseTimeStampReq(requestDer);
      } catch {
        return reject('badDataFormat', 'The body is not a DER TimeStampReq.');
      }
      const refusal = checkRequest(request);
      if (refusal) return reject(refusal.failInfo, refusal.text);
      const failure = this.injected.shift();
      if (failure === 'timeNotAvailable' || failure === 'systemFailure')
        return reject(failure, FAILURE_STATUS_TEXT[failure]);
      return this.grant(request, failure);
    } catch {
      return reject('systemFailure', FAILURE_STATUS_TEXT.systemFailure);
    }
  }

  private grant(request: ParsedTimeStampReq, tamper?: TsaTamper): Uint8Array {
    const serial = this.options.serials.next();
    const flipFirstByte = (bytes: Uint8Array): Uint8Array =>
      Uint8Array.of((bytes[0] as number) ^ 0x01, ...bytes.subarray(1));
    const tstInfo = buildTstInfo({
      policy: TSA_POLICY,
      hashAlgorithm: request.hashAlgorithm,
      hashedMessage: tamper === 'imprint' ? flipFirstByte(request.hashedMessage) : request.hashedMessage,
      serialNumber: bigintBytes(serial),
      genTime: this.options.clock.now(),
      accuracy: { seconds: this.options.accuracySeconds ?? 1 },
      nonce: tamper === 'nonce' && request.nonce ? flipFirstByte(request.nonce) : request.nonce,
      tsaName: this.tsaName,
    });
    const token = buildTimeStampToken({
      tstInfo,
      signerCertificate: this.options.certificate,
      privateKey:
        tamper === 'signature'
          ? (this.wrongKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)
          : this.options.privateKey,
      certificates: request.certReq ? [this.options.certificate] : [],
    });
    return buildTimeStampResp({ status: PKIStatus.granted, token });
  }
}

function checkRequest(request: ParsedTimeStampReq): { failInfo: FailureInfoName; text: string } | undefined {
  if (request.version !== 1n)
    return { failInfo: 'badDataFormat', text: `Unsupported TimeStampReq version ${request.version}; must be 1.` };
  const accepted = ACCEPTED_HASHES.find((hash) => hash.oid === request.hashAlgorithm);
  if (!accepted) {
    return {
      failInfo: 'badAlg',
      text: `Hash algorithm ${request.hashAlgorithm} is not accepted; only SHA-256 (${OID.sha256}), SHA-384 and SHA-512.`,
    };
  }
  if (request.hashedMessage.length !== accepted.length) {
    return {
      failInfo: 'badDataFormat',
      text: `The hashed message is ${request.hashedMessage.length} bytes; ${accepted.name} needs ${accepted.length}.`,
    };
  }
  if (request.reqPolicy !== undefined && request.reqPolicy !== TSA_POLICY) {
    return { failInfo: 'unacceptedPolicy', text: `Policy ${request.reqPolicy} is not supported; only ${TSA_POLICY}.` };
  }
  if (request.extensions !== undefined)
    return { failInfo: 'unacceptedExtension', text: 'TimeStampReq extensions are not supported.' };
  return undefined;
}

function reject(failInfo: FailureInfoName, text: string): Uint8Array {
  return buildTimeStampResp({ status: PKIStatus.rejection, statusString: text, failInfo: [failInfo] });
}

function bigintBytes(value: bigint): Uint8Array {
  const hex = value.toString(16);
  return Uint8Array.from(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
}
