/**
 * The long-term stage of a signing window (B-LT, B-LTA): the revocation data of the window's chains
 * fetched once, then each form's completion takes what it needs from it (into the document, or into
 * the signature). Loaded only at those levels.
 */

import type { CmsValidationData } from '../core/cms/long-term.js';
import type { ChainTarget, ExtensionResult } from '../core/ltv/index.js';
import type { TimestampAuthority } from '../core/ports.js';
import { type BatchResult, type SignedValue, type ExtendSigned } from '../core/sign-workflow.js';
import type { LongTermWindow } from '../core/forms/form.js';
import type { Context } from './context.js';
import type { PdfPasswords } from './pdf-password.js';

/**
 * The long-term extension of each signed PDF, run before its output is committed: the signed
 * document is read back from the temp output (`writeSignature` put the signature there when its
 * timestamp came), so the input is not opened again.
 * Validation data is a stage of the window: once the window's signatures and their timestamps are
 * in, `forWindow` fetches the revocation data of every certificate of the signer's and the TSA's
 * chains once (issued after those signatures), and each document of the window takes it from there.
 */
export async function longTermExtender(
  ctx: Context,
  level: 'B-LT' | 'B-LTA',
  tsa: TimestampAuthority | undefined,
  passwords?: PdfPasswords,
): Promise<{
  forWindow: (signer: readonly Uint8Array[], signed: readonly BatchResult[]) => Promise<LongTermWindow>;
  results: Map<string, ExtensionResult>;
}> {
  const [
    { extendPdf, appendedSource, collectValidationData, RevocationCache, tokenTarget },
    { createRevocationClient },
  ] = await Promise.all([import('../core/ltv/index.js'), import('../io/revocation-client.js')]);
  const fetcher = createRevocationClient(ctx);
  /** The TSA chain of a signature's timestamp as the TSA client read it; parsed from the token only where it was not. */
  const timestampTarget = ({
    timestampCertificates: chain,
    timestampToken: token,
    timestampTime: usedAt,
  }: SignedValue): ChainTarget[] =>
    chain?.[0]
      ? [{ role: 'tsa', leaf: chain[0], pool: chain, usedAt }]
      : token
        ? tokenTarget(token, { genTime: usedAt })
        : [];
  const results = new Map<string, ExtensionResult>();
  const tokenRoom = { bytes: 0 };
  const forWindow = async (signer: readonly Uint8Array[], signed: readonly BatchResult[]): Promise<LongTermWindow> => {
    const times = signed.flatMap((result) =>
      result.status === 'fulfilled' && result.value.timestampTime ? [result.value.timestampTime] : [],
    );
    const first = signed.find(
      (result) =>
        result.status === 'fulfilled' && (result.value.timestampCertificates?.[0] ?? result.value.timestampToken),
    );
    const stamp = first?.status === 'fulfilled' ? first.value : undefined;
    const earliest = times.length > 0 ? new Date(Math.min(...times.map(Number))) : undefined;
    const cache = new RevocationCache(fetcher, {
      now: () => ctx.clock.now(),
      issuedAfter: times.length > 0 ? new Date(Math.max(...times.map(Number))) : undefined,
    });
    // The window's certificates, fetched for all at once; a failure here is each document's to report.
    const targets = [
      ...(signer[0] ? [{ role: 'signer' as const, leaf: signer[0], pool: [...signer], usedAt: earliest }] : []),
      ...(stamp ? timestampTarget(stamp) : []),
    ];
    await collectValidationData(targets, fetcher, [], cache).catch(() => undefined);
    const certificates = [...signer];
    /** CAdES: the validation data of the signer's chain and the TSA's, from the window's cache, for the SignedData. */
    const validationData = async (
      input: string,
      value: SignedValue,
      chains?: 'timestamp',
    ): Promise<CmsValidationData> => {
      const leaf = chains === 'timestamp' ? undefined : signer[0];
      const data = await collectValidationData(
        [
          ...(leaf ? [{ role: 'signer' as const, leaf, pool: [...signer], usedAt: value.timestampTime }] : []),
          ...timestampTarget(value),
        ],
        fetcher,
        [],
        cache,
      );
      results.set(input, {
        tail: new Uint8Array(0),
        signatures: 1,
        documentTimestamps: 0,
        added: { certs: data.certs.length, ocsps: data.ocsps.length, crls: data.crls.length },
        checks: data.checks,
        warnings: data.warnings,
      });
      return { certificates: data.certs, ocsps: data.ocsps, crls: data.crls };
    };
    const extend: ExtendSigned = async ({ input, original, tail, hash, cms, value, signatureObject }) => {
      const known = {
        cms,
        certificates,
        signerCertificate: signer[0],
        timestampToken: value.timestampToken,
        timestampTarget: timestampTarget(value)[0],
        objectNumber: signatureObject,
      };
      const result = await extendPdf(appendedSource(original, tail), hash, level, {
        fetcher,
        tsa,
        password: passwords?.for(input),
        cache,
        known,
        tokenRoom,
      });
      results.set(input, result);
      return result.tail;
    };
    return {
      level,
      extendDocument: extend,
      validationData,
      async archiveTimestamp(input, imprint, digest) {
        const stamp = await tsa!.timestamp(imprint, digest);
        const result = results.get(input);
        if (result) result.archiveTimestamp = stamp.genTime;
        return stamp;
      },
    };
  };
  return { forWindow, results };
}
